/**
 * Every action of the sidebar is reachable with the keyboard, in a sensible order, and the focused control
 * shows it: Tab from the header through the chat, an approval card, the review bar and the model setup form,
 * reading where the focus is and its computed outline / box-shadow after each key.
 */
import { expect, IJupyterLabPageFixture, test } from '@jupyterlab/galata';
import { Locator, TestInfo } from '@playwright/test';

import {
  failOnConsoleErrors,
  loadScript,
  openPanel,
  PANEL_ID,
  screenshot
} from './helpers';

interface IFocused {
  label: string;
  inPanel: boolean;
  indicator: boolean;
  style: string;
}

/** Where the keyboard focus is, what the control is called, and whether it shows a focus indicator. */
function focused(page: IJupyterLabPageFixture): Promise<IFocused> {
  return page.evaluate(panelId => {
    const element = document.activeElement as HTMLElement | null;
    if (!element || element === document.body) {
      return { label: '', inPanel: false, indicator: false, style: '' };
    }
    const style = getComputedStyle(element);
    const outline =
      style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) > 0;
    const shadow = style.boxShadow !== 'none';
    const label =
      element.getAttribute('aria-label') ||
      (element.tagName === 'INPUT' || element.tagName === 'SELECT'
        ? element.closest('label')?.querySelector('span')?.textContent
        : '') ||
      element.textContent?.trim() ||
      element.getAttribute('title') ||
      element.tagName.toLowerCase();
    return {
      label: label.trim(),
      inPanel: !!element.closest(`#${panelId}`),
      indicator: outline || shadow,
      style: `outline: ${style.outlineStyle} ${style.outlineWidth} ${style.outlineColor}; box-shadow: ${style.boxShadow}`
    };
  }, PANEL_ID);
}

/** Press Tab until the focus is on `last`; what had the focus on the way, in order. */
async function tabUntil(
  page: IJupyterLabPageFixture,
  last: string,
  max = 80
): Promise<IFocused[]> {
  const seen: IFocused[] = [];
  for (let presses = 0; presses < max; presses++) {
    await page.keyboard.press('Tab');
    const now = await focused(page);
    seen.push(now);
    if (now.label === last) {
      return seen;
    }
  }
  throw new Error(
    `"${last}" not reached in ${max} Tabs: ${seen.map(f => f.label).join(' | ')}`
  );
}

/** The controls named come in this order (others may come between), each with a visible focus. */
function expectReachedInOrder(seen: IFocused[], labels: string[]): void {
  let from = 0;
  for (const label of labels) {
    const at = seen.findIndex((f, index) => index >= from && f.label === label);
    expect(
      at,
      `"${label}" after "${labels[0]}" in: ${seen.map(f => f.label).join(' | ')}`
    ).toBeGreaterThanOrEqual(0);
    from = at + 1;
  }
  for (const control of seen.filter(f => f.inPanel)) {
    expect(
      control.indicator,
      `"${control.label}" shows no focus (${control.style})`
    ).toBe(true);
  }
}

/** Put the keyboard focus on the History button as a keyboard user would land there (Shift+Tab, Tab). */
async function startAtHeader(
  page: IJupyterLabPageFixture,
  panel: Locator
): Promise<void> {
  await panel.getByRole('button', { name: 'History' }).focus();
  await page.keyboard.press('Shift+Tab');
  await page.keyboard.press('Tab');
  const start = await focused(page);
  expect(start.label).toBe('History');
  expect(start.indicator, start.style).toBe(true);
}

async function shot(
  page: IJupyterLabPageFixture,
  testInfo: TestInfo,
  name: string
): Promise<void> {
  await screenshot(page, testInfo, name);
}

test.describe('keyboard: every action reachable, with visible focus', () => {
  failOnConsoleErrors();

  test('the header, composer and pickers are reached by Tab in order, and a message is sent', async ({
    page,
    request
  }, testInfo) => {
    await loadScript(request, [{ text: 'Hello from the keyboard test.' }]);
    const panel = await openPanel(page);
    await panel.getByRole('button', { name: 'New chat' }).click();
    await startAtHeader(page, panel);
    const toComposer = await tabUntil(page, 'Message');
    expectReachedInOrder(toComposer, [
      'MCP',
      'Permissions',
      'New chat',
      'Message'
    ]);
    // Send is enabled once there is something to send.
    await page.keyboard.type('hello');
    const toSend = await tabUntil(page, 'Send');
    expectReachedInOrder(toSend, ['Model', 'Mode', 'Send']);
    await shot(page, testInfo, 'keyboard-send.png');
    await page.keyboard.press('Enter');
    await expect(
      panel.locator('.jp-hdsp-Message-assistant').last()
    ).toContainText('Hello from the keyboard test.');
  });

  test('an approval card and the review bar are answered with the keyboard', async ({
    page,
    request,
    tmpPath
  }, testInfo) => {
    const path = `${tmpPath}/keys.txt`;
    await request.put(`/api/contents/${path}`, {
      data: { type: 'file', format: 'text', content: 'alpha\nbeta\n' }
    });
    await loadScript(request, [
      {
        tool_calls: [
          [
            'single_find_and_replace',
            JSON.stringify({
              filepath: path,
              old_string: 'beta',
              new_string: 'gamma'
            })
          ]
        ]
      },
      { text: 'Replaced beta.' }
    ]);
    const panel = await openPanel(page);
    await panel.getByRole('button', { name: 'New chat' }).click();
    await startAtHeader(page, panel);
    await tabUntil(page, 'Message');
    await page.keyboard.type('Replace beta');
    await page.keyboard.press('Enter');
    const card = panel.locator('.jp-hdsp-ApprovalCard');
    await expect(card).toBeVisible({ timeout: 30_000 });

    await startAtHeader(page, panel);
    const toCard = await tabUntil(page, 'Deny…');
    // The card is folded to its question (250 px room): the question opens it, then the answers.
    expectReachedInOrder(toCard, [
      'New chat',
      'Change the file keys.txt?',
      'Allow once',
      'Allow for this chat',
      'Always allow…',
      'Deny…'
    ]);
    await shot(page, testInfo, 'keyboard-approval.png');
    for (let back = 0; back < 3; back++) {
      await page.keyboard.press('Shift+Tab');
    }
    expect((await focused(page)).label).toBe('Allow once');
    await page.keyboard.press('Enter');
    await expect(
      panel.locator('.jp-hdsp-Message-assistant').last()
    ).toContainText('Replaced beta.', { timeout: 30_000 });

    const review = panel.getByRole('region', { name: 'Review' });
    await expect(review).toBeVisible();
    await startAtHeader(page, panel);
    const toReview = await tabUntil(page, 'Undo all');
    // The review bar is one line: what changed (opens the list of files), Keep all, Undo all.
    expectReachedInOrder(toReview, ['Changed: 1 file', 'Keep all', 'Undo all']);
    await shot(page, testInfo, 'keyboard-review.png');
    await page.keyboard.press('Shift+Tab');
    expect((await focused(page)).label).toBe('Keep all');
    await page.keyboard.press('Enter');
    await expect(review).toHaveCount(0);
  });

  test('the model setup form is opened and walked with the keyboard', async ({
    page
  }, testInfo) => {
    const panel = await openPanel(page);
    await startAtHeader(page, panel);
    await tabUntil(page, 'Model');
    // On a closed picker, End picks its last entry: "Manage models…".
    await page.keyboard.press('End');
    const setup = panel.getByRole('region', { name: 'Model setup' });
    await expect(setup).toBeVisible();

    await startAtHeader(page, panel);
    const toForm = await tabUntil(page, 'Endpoint URL');
    expectReachedInOrder(toForm, ['New chat', 'Endpoint URL']);
    await page.keyboard.press('Control+a');
    await page.keyboard.type(
      `http://127.0.0.1:${process.env.HDSP_UI_MODEL_PORT}/v1`
    );
    const toKey = await tabUntil(page, 'API key');
    // Leaving the URL lists the endpoint's models: the model field becomes a picker.
    await expect(setup.locator('select').first()).toBeVisible();
    const seen = [...toKey, ...(await tabUntil(page, 'Close'))];
    expectReachedInOrder(seen, [
      'API key',
      'Model',
      'List models',
      'Test',
      'Save',
      'Close'
    ]);
    await shot(page, testInfo, 'keyboard-setup.png');
    await page.keyboard.press('Enter');
    await expect(setup).toHaveCount(0);
    await expect(panel.getByRole('textbox', { name: 'Message' })).toBeVisible();
  });
});
