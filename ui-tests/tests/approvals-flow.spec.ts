/**
 * Approvals that scale with trust, by keyboard (issue 28): the three-request walk of a data scientist's
 * afternoon needs at most three approvals in "Accept edits" and no mouse; Escape on a card declines that
 * call and the turn goes on; an edit that cannot apply is refused before anyone is asked.
 */
import { expect, IJupyterLabPageFixture, test } from '@jupyterlab/galata';
import { Locator } from '@playwright/test';

import {
  cellsOnDisk,
  failOnConsoleErrors,
  loadScript,
  modelRequests,
  openPanel,
  screenshot
} from './helpers';

/** Where the keyboard focus is: the focused element's accessible name (or its text). */
function focusedName(page: IJupyterLabPageFixture): Promise<string> {
  return page.evaluate(() => {
    const element = document.activeElement as HTMLElement | null;
    return (
      element?.getAttribute('aria-label') || element?.textContent?.trim() || ''
    );
  });
}

/** Start a new chat and send `message` by keyboard only, from the composer. */
async function typeMessage(
  page: IJupyterLabPageFixture,
  panel: Locator,
  message: string,
  newChat = false
): Promise<void> {
  if (newChat) {
    await panel.getByRole('button', { name: 'New chat' }).focus();
    await page.keyboard.press('Enter');
  }
  const input = panel.getByRole('textbox', { name: 'Message' });
  await input.focus();
  await page.keyboard.type(message);
  await page.keyboard.press('Enter');
  await expect(panel.locator('.jp-hdsp-Message-user').last()).toContainText(
    message
  );
}

/**
 * Answer every card that waits, by keyboard, until the agent's answer contains `answer`; how many were
 * answered. `key` picks the keys for a card (the offer of "allow for this chat" shows as its own button).
 */
async function approveUntil(
  page: IJupyterLabPageFixture,
  panel: Locator,
  answer: string,
  key: (card: Locator) => Promise<string>
): Promise<number> {
  let answered = 0;
  const card = panel.locator('.jp-hdsp-ApprovalCard');
  const reply = panel.locator('.jp-hdsp-Message-assistant').last();
  await expect(async () => {
    if (await card.isVisible()) {
      const id = await card.getAttribute('data-call-id');
      await page.keyboard.press(await key(card));
      await expect(
        card.and(page.locator(`[data-call-id="${id}"]`))
      ).toHaveCount(0);
      answered += 1;
    }
    await expect(reply).toContainText(answer, { timeout: 1000 });
  }).toPass({ timeout: 90_000 });
  return answered;
}

test.describe('approvals that scale with trust, by keyboard', () => {
  failOnConsoleErrors();

  test('the three-request walk needs at most three approvals in Accept edits, all by keyboard', async ({
    page,
    request,
    tmpPath
  }, testInfo) => {
    test.setTimeout(240_000);
    const path = `${tmpPath}/walk.ipynb`;
    await request.put(`/api/contents/${tmpPath}/data.csv`, {
      data: {
        type: 'file',
        format: 'text',
        content: 'fruit,count\napple,3\npear,5\nplum,2\n'
      }
    });
    await page.notebook.createNew('walk.ipynb');
    await page.notebook.setCell(
      0,
      'code',
      "totals = {'apple': 3}\ntotals['pear']"
    );
    await page.notebook.save();
    const saved = await (
      await request.get(`/api/contents/${path}?content=1&type=notebook`)
    ).json();
    const userCell = saved.content.cells[0].id;
    const overview =
      "rows = [line.split(',') for line in open('data.csv').read().split()]\nprint(len(rows) - 1, 'rows:', rows[0])";
    const chart =
      "for fruit, count in rows[1:]:\n    print(f'{fruit:>6} ' + '#' * int(count))";
    await loadScript(request, [
      { tool_calls: [['run_cell', JSON.stringify({ path, code: overview })]] },
      { text: 'data.csv has 3 rows of fruit counts.' },
      { tool_calls: [['run_cell', JSON.stringify({ path, code: chart })]] },
      { text: 'Here is the bar chart.' },
      {
        tool_calls: [
          [
            'edit_cell',
            JSON.stringify({
              path,
              cell_id: userCell,
              old_string: "totals['pear']",
              new_string: "totals.get('pear', 0)"
            })
          ]
        ]
      },
      {
        tool_calls: [['run_cell', JSON.stringify({ path, cell_id: userCell })]]
      },
      {
        tool_calls: [
          ['run_cell', JSON.stringify({ path, code: "print('checked')" })]
        ]
      },
      { text: 'Fixed: the KeyError is gone.' }
    ]);
    const panel = await openPanel(page);
    await panel
      .getByRole('combobox', { name: 'Mode', exact: true })
      .selectOption({ label: 'Accept edits' });
    const composer = panel.getByRole('textbox', { name: 'Message' });
    const live = panel.locator('.jp-hdsp-LiveAnnouncement');

    // 1. The overview: the card announces itself and takes the focus (the composer is empty); Enter.
    await typeMessage(
      page,
      panel,
      'load data.csv and give me an overview',
      true
    );
    const card = panel.getByRole('dialog', {
      name: 'Run a cell in walk.ipynb?'
    });
    await expect(card).toBeVisible();
    await expect(live).toContainText('Waiting for your approval');
    await expect(live).toContainText('Ctrl+Enter');
    await expect.poll(() => focusedName(page)).toBe('Allow once');
    await screenshot(page, testInfo, 'walk-first-card.png');
    let approvals = await approveUntil(
      page,
      panel,
      '3 rows',
      async () => 'Enter'
    );
    await expect(composer).toBeFocused();

    // 2. The bar chart: Ctrl+Enter from the composer allows once.
    await typeMessage(page, panel, 'a bar chart of the counts');
    approvals += await approveUntil(
      page,
      panel,
      'bar chart',
      async () => 'Control+Enter'
    );

    // 3. The KeyError: the edit goes through in Accept edits; the third run of this notebook offers
    // "for this chat" in one key, and the run after it does not ask.
    await composer.focus();
    await typeMessage(page, panel, 'fix the KeyError in my first cell');
    const offer = panel.getByRole('button', {
      name: 'Run cells in walk.ipynb without asking for this chat'
    });
    await expect(offer).toBeVisible({ timeout: 60_000 });
    await screenshot(page, testInfo, 'walk-scope-offer.png');
    approvals += await approveUntil(
      page,
      panel,
      'KeyError is gone',
      async () => 'Control+Shift+Enter'
    );

    expect(approvals).toBeLessThanOrEqual(3);
    await expect
      .poll(() => cellsOnDisk(request, path))
      .toContain("totals = {'apple': 3}\ntotals.get('pear', 0)");
    await expect(
      panel.locator('.jp-hdsp-ToolCard[data-status="done"]')
    ).toHaveCount(5);
  });

  test('Escape on a card declines that call and the turn goes on; Ctrl+Backspace declines from the composer', async ({
    page,
    request,
    tmpPath
  }) => {
    const path = `${tmpPath}/escape.ipynb`;
    await page.notebook.createNew('escape.ipynb');
    await loadScript(request, [
      {
        tool_calls: [['run_cell', JSON.stringify({ path, code: 'print(1)' })]]
      },
      {
        tool_calls: [['run_cell', JSON.stringify({ path, code: 'print(2)' })]]
      },
      { text: 'Understood, I ran nothing.' }
    ]);
    const panel = await openPanel(page);
    await typeMessage(page, panel, 'run two things', true);
    const card = panel.locator('.jp-hdsp-ApprovalCard');
    await expect(card).toBeVisible();
    await expect.poll(() => focusedName(page)).toBe('Allow once');
    const firstId = await card.getAttribute('data-call-id');
    await page.keyboard.press('Escape');

    // The second call asks: the turn went on. The focus is back in the composer: Ctrl+Backspace declines.
    await expect(card).toBeVisible();
    await expect(card).not.toHaveAttribute('data-call-id', firstId!);
    const composer = panel.getByRole('textbox', { name: 'Message' });
    // Typing is never eaten: with words in the composer, Ctrl+Backspace deletes one and answers nothing.
    await composer.focus();
    await page.keyboard.type('hello world');
    await page.keyboard.press('Control+Backspace');
    await expect(composer).toHaveValue('hello ');
    await expect(card).toBeVisible();
    await composer.fill('');
    await page.keyboard.press('Control+Backspace');
    await expect(
      panel.locator('.jp-hdsp-Message-assistant').last()
    ).toContainText('Understood, I ran nothing.');
    await expect(
      panel.locator('.jp-hdsp-ToolCard[data-status="denied"]')
    ).toHaveCount(2);
    const requests = await modelRequests(request);
    const declined = requests[requests.length - 1].messages.filter(
      (message: any) => message.role === 'tool'
    );
    expect(
      declined.map((message: any) => message.content).join('\n')
    ).toContain('declined');
    await expect(composer).toBeFocused();
  });

  test('an edit_cell whose old_string is not in the cell shows no card; the model gets the error', async ({
    page,
    request,
    tmpPath
  }) => {
    const path = `${tmpPath}/refuse.ipynb`;
    await page.notebook.createNew('refuse.ipynb');
    await page.notebook.setCell(0, 'code', 'x = 1');
    await page.notebook.save();
    const saved = await (
      await request.get(`/api/contents/${path}?content=1&type=notebook`)
    ).json();
    const cellId = saved.content.cells[0].id;
    await loadScript(request, [
      {
        tool_calls: [
          [
            'edit_cell',
            JSON.stringify({
              path,
              cell_id: cellId,
              old_string: 'y = 2',
              new_string: 'y = 3'
            })
          ]
        ]
      },
      { text: 'That text is not in the cell.' }
    ]);
    const panel = await openPanel(page);
    // Ask before changes: an edit that could apply would ask here.
    await panel
      .getByRole('combobox', { name: 'Mode', exact: true })
      .selectOption({ label: 'Ask before changes' });
    await typeMessage(page, panel, 'change y in my cell', true);
    await expect(
      panel.locator('.jp-hdsp-Message-assistant').last()
    ).toContainText('not in the cell', { timeout: 60_000 });
    await expect(panel.locator('.jp-hdsp-ApprovalCard')).toHaveCount(0);
    await expect(
      panel.locator('.jp-hdsp-ToolCard[data-status="errored"]')
    ).toHaveCount(1);
    const requests = await modelRequests(request);
    const result = requests[requests.length - 1].messages.filter(
      (message: any) => message.role === 'tool'
    );
    expect(result[0].content).toContain('old_string');
    expect(await cellsOnDisk(request, path)).toEqual(['x = 1']);
  });
});
