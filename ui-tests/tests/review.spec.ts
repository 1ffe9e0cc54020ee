import { expect, test } from '@jupyterlab/galata';

import {
  failOnConsoleErrors,
  loadScript,
  openPanel,
  screenshot,
  sendInNewChat
} from './helpers';

test.describe('reviewing the agent’s changes where they happened', () => {
  failOnConsoleErrors();

  test('a turn that inserts two cells and edits a third shows three marks; Undo on one restores it only', async ({
    page,
    request,
    tmpPath
  }, testInfo) => {
    await page.notebook.createNew('review.ipynb');
    await page.notebook.setCell(0, 'code', 'x = 1');
    await page.notebook.save();
    const path = `${tmpPath}/review.ipynb`;
    const saved = await (
      await request.get(`/api/contents/${path}?content=1&type=notebook`)
    ).json();
    const firstId = saved.content.cells[0].id;
    await loadScript(request, [
      {
        tool_calls: [
          ['insert_cell', JSON.stringify({ path, source: 'a = 10' })],
          ['insert_cell', JSON.stringify({ path, source: 'b = 20' })],
          [
            'edit_cell',
            JSON.stringify({ path, cell_id: firstId, source: 'x = 100' })
          ]
        ]
      },
      { text: 'Added a and b, and changed x.' }
    ]);

    const panel = await openPanel(page);
    await panel
      .getByRole('combobox', { name: 'Mode', exact: true })
      .selectOption({ label: 'Accept edits' });
    await sendInNewChat(panel, 'Add a and b, set x to 100');
    // Notebook edits may still ask in this mode: approve each until the answer arrives.
    const answer = panel.locator('.jp-hdsp-Message-assistant').last();
    const allow = panel.getByRole('button', { name: 'Allow once' });
    await expect(async () => {
      if (await allow.first().isVisible()) {
        await allow.first().click();
      }
      await expect(answer).toContainText('Added a and b', { timeout: 1000 });
    }).toPass({ timeout: 60_000 });

    const notebook = page.locator('.jp-NotebookPanel:visible');
    const marked = notebook.locator('.jp-Cell.jp-hdsp-AgentChanged');
    await expect(marked).toHaveCount(3);
    await expect(notebook.locator('.jp-hdsp-ReviewBadge')).toHaveCount(3);
    await expect(panel.getByRole('region', { name: 'Review' })).toContainText(
      '3 cells'
    );
    await screenshot(page, testInfo, 'review-marks.png');

    // Undo the edit of the first cell: it is x = 1 again; the two new cells stay, still marked.
    const first = notebook.locator('.jp-Cell').first();
    await expect(first).toContainText('x = 100');
    await first.getByRole('button', { name: 'Undo' }).click();
    await expect(first).toContainText('x = 1');
    await expect(first).not.toContainText('x = 100');
    await expect(marked).toHaveCount(2);
    await expect(notebook.locator('.jp-Cell')).toHaveCount(3);
    await expect(notebook.locator('.jp-Cell').nth(1)).toContainText('a = 10');
    await expect(notebook.locator('.jp-Cell').nth(2)).toContainText('b = 20');

    // Keep one: its mark goes, the cell stays.
    await notebook
      .locator('.jp-Cell')
      .nth(1)
      .getByRole('button', { name: 'Keep' })
      .click();
    await expect(marked).toHaveCount(1);
    await expect(notebook.locator('.jp-Cell')).toHaveCount(3);
    await screenshot(page, testInfo, 'review-after-undo-one.png');
  });
});
