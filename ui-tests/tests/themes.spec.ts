/**
 * The newer screens in JupyterLab's dark theme and in Korean, at a 300 px sidebar: the approval card, the
 * plan checklist, the review bar with the marks in the editor, the usage footer, the permissions view and
 * the model setup. Each is attached as a screenshot and checked: in the dark theme every text and enabled
 * button has a contrast of at least 4.5:1 against what is painted behind it (WCAG AA), and in both no card
 * is wider than the sidebar (no text cut off or scrolling sideways).
 *
 * The scenario finds things by class, not by their English names, so the same walk runs in Korean.
 */
import { expect, test } from '@jupyterlab/galata';
import { APIRequestContext, Locator, Page, TestInfo } from '@playwright/test';

import {
  contrast,
  failOnConsoleErrors,
  loadScript,
  openPanel,
  screenshot,
  sendInNewChat,
  setLanguage,
  setRightSidebarWidth
} from './helpers';

const SIDEBAR_WIDTH = 300;
const TEXT = [
  'h3',
  'h4',
  'p',
  'li',
  'label span',
  'summary',
  'code',
  'button:not(:disabled)',
  'select',
  'input',
  '[class*="-label"]',
  '[class*="-title"]',
  '[class*="-what"]',
  '[class*="-removed"]'
].join(', ');

/** Every visible text of `card` (and each enabled button) reads at 4.5:1 or more. */
async function expectReadable(card: Locator): Promise<void> {
  const low: string[] = [];
  for (const element of await card.locator(TEXT).all()) {
    if (!(await element.isVisible())) {
      continue;
    }
    const text = (await element.innerText()).trim();
    const isControl = await element.evaluate(node =>
      ['SELECT', 'INPUT', 'BUTTON'].includes(node.tagName)
    );
    if (!text && !isControl) {
      continue;
    }
    const ratio = await contrast(element);
    if (ratio < 4.5) {
      const name = await element.evaluate(
        node => `${node.tagName.toLowerCase()}.${node.className}`
      );
      low.push(`${name} "${text.slice(0, 40)}": ${ratio.toFixed(2)}`);
    }
  }
  expect(low, 'texts under 4.5:1').toEqual([]);
  expect(await contrast(card)).toBeGreaterThanOrEqual(4.5);
}

/** Nothing in `card` is wider than the card, and the card is no wider than the sidebar. */
async function expectFits(card: Locator, panel: Locator): Promise<void> {
  const problems = await card.evaluate(
    (node, panelNode) => {
      const found: string[] = [];
      const right = (panelNode as Element).getBoundingClientRect().right + 1;
      for (const element of [node, ...Array.from(node.querySelectorAll('*'))]) {
        const box = element.getBoundingClientRect();
        if (box.width === 0) {
          continue;
        }
        const name = `${element.tagName.toLowerCase()}.${element.className}`;
        // A text cut with an ellipsis on purpose (the folded approval card's question: whole in its
        // title, and when the card is opened) is not overflow.
        const cut = getComputedStyle(element).textOverflow === 'ellipsis';
        if (
          !cut &&
          element.scrollWidth > element.clientWidth + 1 &&
          element.clientWidth > 0
        ) {
          found.push(
            `${name} scrolls: ${element.scrollWidth} > ${element.clientWidth}`
          );
        }
        if (box.right > right) {
          found.push(
            `${name} sticks out: ${Math.round(box.right)} > ${Math.round(right)}`
          );
        }
      }
      return found;
    },
    await panel.elementHandle()
  );
  expect(problems, 'overflow at a 300 px sidebar').toEqual([]);
}

interface IWalk {
  page: Page;
  request: APIRequestContext;
  testInfo: TestInfo;
  tmpPath: string;
  dark: boolean;
  prefix: string;
}

/** One turn that plans, edits a file (approved from the card) and answers; then each screen, checked. */
async function walkTheScreens(walk: IWalk): Promise<Locator> {
  const { page, request, testInfo, tmpPath, dark, prefix } = walk;
  const check = async (card: Locator, panel: Locator) => {
    await expect(card).toBeVisible();
    await expectFits(card, panel);
    if (dark) {
      await expectReadable(card);
    }
  };
  const path = `${tmpPath}/analysis_settings.py`;
  await request.put(`/api/contents/${path}`, {
    data: {
      type: 'file',
      format: 'text',
      content:
        'threshold_for_the_experiment_with_a_long_name = 0.5\nrows = 100\n'
    }
  });
  await page.evaluate(async p => {
    await (window as any).jupyterapp.commands.execute('docmanager:open', {
      path: p
    });
  }, path);
  await loadScript(request, [
    {
      tool_calls: [
        [
          'todo',
          JSON.stringify({
            items: [
              { text: 'Read the experiment settings', status: 'done' },
              { text: 'Raise the threshold to 0.8', status: 'in_progress' },
              { text: 'Explain what changed', status: 'pending' }
            ]
          })
        ]
      ]
    },
    {
      tool_calls: [
        [
          'single_find_and_replace',
          JSON.stringify({
            filepath: path,
            old_string: '= 0.5',
            new_string: '= 0.8'
          })
        ]
      ]
    },
    { text: 'Done: the threshold is 0.8 now.' }
  ]);

  const panel = await openPanel(page);
  await setRightSidebarWidth(page, SIDEBAR_WIDTH);
  await expect
    .poll(() => panel.evaluate(node => node.getBoundingClientRect().width))
    .toBeLessThanOrEqual(SIDEBAR_WIDTH + 10);
  await panel.locator('.jp-hdsp-HeaderButton').nth(3).click(); // New chat
  // A plain page loads the lab's real workspace, where an earlier test may have left another mode: the
  // approval card needs the default one.
  await panel
    .locator(
      '.jp-hdsp-ComposerToolbar select:has(option[value="accept-edits"])'
    )
    .selectOption('default');
  const input = panel.locator('.jp-hdsp-Composer-input');
  await input.fill('Raise the threshold to 0.8');
  await input.press('Enter');

  const card = panel.locator('.jp-hdsp-ApprovalCard');
  await check(card, panel);
  // Folded, the question may be cut; its title holds all of it.
  const question = card.locator('.jp-hdsp-ApprovalCard-question');
  await expect(question).toHaveAttribute(
    'title',
    (await question.textContent()) ?? ''
  );
  // Opened, the whole question wraps inside the card.
  await card.locator('.jp-hdsp-ApprovalCard-title').click();
  await check(card, panel);
  await screenshot(page, testInfo, `${prefix}-approval-card.png`);
  await card.locator('.jp-hdsp-ApprovalCard-buttons button').nth(1).click(); // for this chat
  await expect(
    panel.locator('.jp-hdsp-Message-assistant').last()
  ).toContainText('the threshold is 0.8 now');

  const editor = page.locator('.jp-FileEditor:visible');
  await expect(editor.locator('.jp-hdsp-HunkBar')).toHaveCount(1);
  await check(panel.locator('.jp-hdsp-Plan'), panel);
  await check(panel.locator('.jp-hdsp-ReviewBar'), panel);
  await check(panel.locator('.jp-hdsp-Usage'), panel);
  if (dark) {
    await expectReadable(editor.locator('.jp-hdsp-HunkBar'));
  }
  await screenshot(page, testInfo, `${prefix}-plan-review-usage.png`);

  await panel.locator('.jp-hdsp-HeaderButton').nth(2).click(); // Permissions
  await check(panel.locator('.jp-hdsp-Permissions'), panel);
  await screenshot(page, testInfo, `${prefix}-permissions.png`);
  await panel.locator('.jp-hdsp-HeaderButton').nth(2).click();

  await panel
    .locator('.jp-hdsp-ComposerToolbar select')
    .first()
    .selectOption({ value: '\u0000manage-models' });
  const setup = panel.locator('.jp-hdsp-Setup');
  await check(setup, panel);
  await screenshot(page, testInfo, `${prefix}-setup.png`);
  await setup.locator('.jp-hdsp-Setup-actions button').last().click(); // Close
  await expect(setup).toHaveCount(0);
  return panel;
}

test.describe('the newer screens in the dark theme', () => {
  failOnConsoleErrors();

  test.afterEach(async ({ page }) => {
    await page.theme.setLightTheme();
  });

  test('read at 4.5:1 or more and fit a 300 px sidebar', async ({
    page,
    request,
    tmpPath
  }, testInfo) => {
    await page.theme.setDarkTheme();
    const panel = await walkTheScreens({
      page,
      request,
      testInfo,
      tmpPath,
      dark: true,
      prefix: 'dark'
    });

    // The marks on a notebook cell the agent inserted read in the dark theme too.
    await page.notebook.createNew('dark-review.ipynb');
    await loadScript(request, [
      {
        tool_calls: [
          [
            'insert_cell',
            JSON.stringify({
              path: `${tmpPath}/dark-review.ipynb`,
              source: 'threshold = 0.8'
            })
          ]
        ]
      },
      { text: 'Added a cell.' }
    ]);
    await panel
      .getByRole('combobox', { name: 'Mode', exact: true })
      .selectOption({ label: 'Accept edits' });
    await sendInNewChat(panel, 'Add a cell');
    const answer = panel.locator('.jp-hdsp-Message-assistant').last();
    const allow = panel.getByRole('button', { name: 'Allow once' });
    await expect(async () => {
      if (await allow.first().isVisible()) {
        await allow.first().click();
      }
      await expect(answer).toContainText('Added a cell', { timeout: 1000 });
    }).toPass({ timeout: 60_000 });
    const badge = page.locator(
      '.jp-NotebookPanel:visible .jp-hdsp-ReviewBadge'
    );
    await expect(badge).toHaveCount(1);
    await expectReadable(badge);
    await expectReadable(panel.locator('.jp-hdsp-ReviewBar'));
    await screenshot(page, testInfo, 'dark-notebook-marks.png');
  });
});

test.describe('the newer screens in Korean', () => {
  // A plain page (galata's helpers look for English labels), as in i18n.spec.ts; English again afterwards.
  test.afterEach(async ({ request }) => {
    await setLanguage(request, null);
  });

  test('are translated and fit a 300 px sidebar', async ({
    context,
    request,
    baseURL,
    tmpPath
  }, testInfo) => {
    await setLanguage(request, 'ko_KR');
    const page = await context.newPage();
    await page.goto(`${baseURL}/lab?reset`);
    await expect(
      page.locator('#jp-MainMenu').getByText('파일', { exact: true })
    ).toBeVisible({ timeout: 60_000 });
    await page.waitForFunction(() => (window as any).jupyterapp?.restored);
    await page.evaluate(() => (window as any).jupyterapp.restored);

    const panel = await walkTheScreens({
      page,
      request,
      testInfo,
      tmpPath,
      dark: false,
      prefix: 'korean'
    });
    // The review's words are Korean, in the sidebar and in the editor.
    await expect(panel.locator('.jp-hdsp-ReviewBar')).toContainText('파일');
    await expect(panel.locator('.jp-hdsp-ReviewBar')).toContainText(
      '모두 유지'
    );
    const bar = page.locator('.jp-FileEditor:visible .jp-hdsp-HunkBar');
    await expect(bar.locator('.jp-hdsp-HunkBar-label')).toHaveText('에이전트');
    await expect(bar.locator('button').first()).toHaveText('유지');
    await page.close();
  });
});
