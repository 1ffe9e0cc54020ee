import { expect, test } from '@jupyterlab/galata';

import {
  failOnConsoleErrors,
  loadScript,
  openPanel,
  releaseModel,
  screenshot,
  sendInNewChat
} from './helpers';

/**
 * A notebook whose saved outputs came from out-of-order runs: cell 1 printed 21 because cell 2, below
 * it, had already set `scale` (execution counts 1, 3, 2).
 */
function hiddenStateNotebook(): Record<string, unknown> {
  const code = (
    id: string,
    source: string,
    count: number,
    outputs: unknown[] = []
  ) => ({
    cell_type: 'code',
    id,
    metadata: {},
    source,
    execution_count: count,
    outputs
  });
  return {
    nbformat: 4,
    nbformat_minor: 5,
    metadata: {
      kernelspec: { name: 'python3', display_name: 'Python 3' }
    },
    cells: [
      code('base', 'base = 7', 1),
      code('product', 'print(base * scale)', 3, [
        { output_type: 'stream', name: 'stdout', text: '21\n' }
      ]),
      code('scale', 'scale = 3', 2)
    ]
  };
}

test.describe('can I trust this result?', () => {
  failOnConsoleErrors();

  test('the toolbar replay finds the hidden state, links the finding to its cell, and the answer numbers to outputs', async ({
    page,
    request,
    tmpPath
  }, testInfo) => {
    const path = `${tmpPath}/hidden.ipynb`;
    const put = await request.put(`/api/contents/${path}`, {
      data: { type: 'notebook', format: 'json', content: hiddenStateNotebook() }
    });
    expect(put.ok()).toBeTruthy();
    await loadScript(request, [
      // The chat is busy with another task when the button is pressed (held until released below).
      { text: 'Reading the notebook first. ', pieces: 4, hold_after: 2 },
      {
        tool_calls: [['check_reproducibility', JSON.stringify({ path })]]
      },
      {
        text: 'The saved **21** in the second cell only came from running the third first; a fresh kernel raises NameError. The average of 63.5 is not from any output.'
      }
    ]);
    await page.notebook.openByPath(path);
    const panel = await openPanel(page);
    await sendInNewChat(panel, 'What does this notebook compute?');
    await expect(panel.locator('.jp-hdsp-Message-assistant')).toContainText(
      'Reading'
    );

    // The notebook's toolbar button asks the agent; the replay runs code, so it asks first. The open
    // chat is working: the replay starts a chat of its own instead of being refused.
    const toolbar = page
      .locator('.jp-NotebookPanel:visible .jp-Toolbar')
      .first();
    const button = page.locator('.jp-hdsp-ReplayButton:visible');
    if (!(await button.isVisible())) {
      // A narrow toolbar keeps its last items under "More commands".
      await toolbar.getByRole('button', { name: 'More commands' }).click();
    }
    await button.click();
    await panel
      .getByRole('dialog')
      .getByRole('button', { name: 'Allow once' })
      .click();
    await expect(panel.locator('.jp-hdsp-Message-user')).toHaveCount(1);
    await expect(panel.locator('.jp-hdsp-Message-user')).not.toContainText(
      'What does this notebook compute?'
    );
    await releaseModel(request); // the other chat's turn ends

    const finding = panel.locator('.jp-hdsp-Replay-finding');
    await expect(finding).toHaveCount(1, { timeout: 60_000 });
    await expect(finding).toHaveAttribute('data-cause', 'used_before_defined');
    await expect(finding).toHaveAttribute('data-cell-index', '1');
    await expect(finding).toContainText(
      'a name used before the cell that defines it'
    );
    await expect(finding).toContainText('NameError');
    await screenshot(page, testInfo, 'replay-card.png');

    // The finding shows its cell in the notebook.
    // Numbered as JupyterLab numbers cells (from 1): index 1 is "Cell 2".
    await finding.getByRole('button', { name: 'Cell 2' }).click();
    const cells = page.locator('.jp-NotebookPanel:visible .jp-Cell');
    await expect(cells.nth(1)).toHaveClass(/jp-mod-active/);

    // The answer's numbers: 21 is tied to the replay's output line, 63.5 is marked as found nowhere.
    const answer = panel.locator('.jp-hdsp-Message-assistant').last();
    const found = answer.locator('.jp-hdsp-Number.jp-mod-found');
    await expect(found).toHaveText(['21']);
    await expect(found).toHaveAttribute('title', /check_reproducibility/);
    const unfound = answer.locator('.jp-hdsp-Number.jp-mod-unfound');
    await expect(unfound).toHaveText(['63.5']);
    await expect(unfound).toHaveAttribute(
      'title',
      'Not found in any output of this turn'
    );
    const callId = await found.getAttribute('data-call-id');
    await found.click();
    // The card of the call the number came from.
    const card = panel
      .locator(`.jp-hdsp-ToolCard[data-call-id="${callId}"]`)
      .first();
    await expect(card).toHaveClass(/jp-mod-highlighted/);
    await expect(card.locator('.jp-hdsp-ToolCard-body')).toBeVisible();
    await screenshot(page, testInfo, 'answer-numbers.png');
  });

  test('after a turn that ran code, the review bar lists the kernel variables it created', async ({
    page,
    request
  }, testInfo) => {
    await loadScript(request, [
      {
        tool_calls: [
          [
            'run_cell',
            JSON.stringify({ code: "total = 40 + 2\nnames = ['a', 'b']" })
          ]
        ]
      },
      { text: 'Done: total is 42.' }
    ]);
    await page.notebook.createNew('vars.ipynb');
    const panel = await openPanel(page);
    await sendInNewChat(panel, 'Compute the total');
    await panel
      .getByRole('dialog')
      .getByRole('button', { name: 'Allow once' })
      .click();
    const changes = panel.locator('.jp-hdsp-KernelChange');
    await expect(changes).toHaveCount(2, { timeout: 60_000 });
    await expect(changes.filter({ hasText: 'total' })).toContainText('= 42');
    await expect(changes.filter({ hasText: 'names' })).toContainText(
      "list [2] = ['a', 'b']"
    );
    await expect(changes.first()).toHaveAttribute('data-change', 'created');
    await screenshot(page, testInfo, 'kernel-changes.png');
    await panel.getByRole('button', { name: 'Keep all' }).click();
    await expect(changes).toHaveCount(0);
  });
});
