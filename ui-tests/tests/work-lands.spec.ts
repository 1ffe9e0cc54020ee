import { expect, test } from '@jupyterlab/galata';

import {
  codeCell,
  failOnConsoleErrors,
  loadScript,
  notebookCells,
  openPanel,
  openWith,
  putNotebook,
  sendInNewChat
} from './helpers';

/**
 * Where the agent's work lands (issue 28, problem 7): its cells in order after the cell in view, the
 * launcher's empty cell reused, the chat titled with the notebook's name, restored-away messages shown as
 * undone, "Undo all" waiting for the turn, a rule file added while Lab runs getting its chip, the notebook
 * scrolled to the agent's changed cell unless the user is typing in another.
 */
test.describe('where the work lands', () => {
  failOnConsoleErrors();
  test.setTimeout(180_000); // two or three approvals and runs per test on a loaded machine

  test("a turn's cells land in order in a new notebook, its empty cell reused; the chat is named after it; a restore shows the turn undone", async ({
    page,
    request
  }) => {
    await loadScript(request, [
      { tool_calls: [['run_cell', JSON.stringify({ code: 'first = 1' })]] },
      { tool_calls: [['run_cell', JSON.stringify({ code: 'second = 2' })]] },
      { tool_calls: [['run_cell', JSON.stringify({ code: 'third = 3' })]] },
      { text: 'Three cells.' }
    ]);
    // A new notebook from the launcher: one empty cell, the cell in view.
    await page.notebook.createNew('lands.ipynb');
    const panel = await openPanel(page);
    await sendInNewChat(
      panel,
      'Please make three numbered variables, then print them'
    );
    const dialog = panel.getByRole('dialog', { name: /^Run a cell in / });
    for (let call = 0; call < 3; call++) {
      await dialog.getByRole('button', { name: 'Allow once' }).click();
      await expect(
        panel.locator('.jp-hdsp-ToolCard').nth(call)
      ).toHaveAttribute('data-status', 'done', { timeout: 30_000 });
    }
    await expect(
      panel.locator('.jp-hdsp-Message-assistant').last()
    ).toContainText('Three cells.');

    // (1) in order, newest last; (3) no empty cell left above them.
    const cells = notebookCells(page);
    await expect(cells).toHaveCount(3);
    await expect(cells.nth(0)).toContainText('first = 1');
    await expect(cells.nth(1)).toContainText('second = 2');
    await expect(cells.nth(2)).toContainText('third = 3');

    // (8) the message restored away is shown as undone, dimmed and labelled.
    await panel.getByRole('button', { name: 'Restore to here' }).click();
    const undone = panel.locator('.jp-hdsp-mod-undone');
    await expect(undone.first()).toContainText('three numbered variables');
    await expect(undone.first()).toContainText(
      'Undone: restored to before this message'
    );
    expect(
      Number(
        await undone.first().evaluate(node => getComputedStyle(node).opacity)
      )
    ).toBeLessThan(1);

    // (4) the history title is a short summary with the notebook's name.
    await panel.getByRole('button', { name: 'History' }).click();
    await expect(
      panel.getByRole('list', { name: 'Conversations' })
    ).toContainText('Make three numbered variables — lands.ipynb');
  });

  test('"Undo all" waits for the running turn; a rule file added while Lab runs gets its chip', async ({
    page,
    request
  }) => {
    await loadScript(request, [
      { tool_calls: [['run_cell', JSON.stringify({ code: 'y = 2' })]] },
      { text: 'Added y.' },
      {
        tool_calls: [
          ['run_cell', JSON.stringify({ code: 'import time\ntime.sleep(4)' })]
        ]
      },
      { text: 'Slept.' }
    ]);
    await page.notebook.createNew('waits.ipynb');
    await page.notebook.setCell(0, 'code', 'x = 1');
    const panel = await openPanel(page);
    await sendInNewChat(panel, 'Add y');
    await panel
      .getByRole('dialog', { name: /^Run a cell in / })
      .getByRole('button', { name: 'Allow once' })
      .click();
    await expect(
      panel.locator('.jp-hdsp-Message-assistant').last()
    ).toContainText('Added y.');
    const undoAll = panel.getByRole('button', { name: 'Undo all' });
    await expect(undoAll).toBeEnabled();

    // (7) mid-turn the review bar's Undo all cannot be clicked.
    const input = panel.getByRole('textbox', { name: 'Message' });
    await input.fill('Now sleep');
    await input.press('Enter');
    await panel
      .getByRole('dialog', { name: /^Run a cell in / })
      .getByRole('button', { name: 'Allow once' })
      .click();
    await expect(panel.locator('.jp-hdsp-Working')).toBeVisible();
    await expect(undoAll).toBeDisabled();
    await expect(
      panel.locator('.jp-hdsp-Message-assistant').last()
    ).toContainText('Slept.', { timeout: 30_000 });
    await expect(undoAll).toBeEnabled();

    // (6) a rule file added now gets its chip without a reload.
    const chip = panel.locator('.jp-hdsp-Chip-instructions', {
      hasText: 'AGENTS.md'
    });
    await expect(chip).toHaveCount(0);
    await request.put('/api/contents/AGENTS.md', {
      data: { type: 'file', format: 'text', content: 'Use pandas.\n' }
    });
    try {
      await expect(chip).toHaveCount(1, { timeout: 10_000 });
    } finally {
      // The file is at the server's root: other specs' prompts must not get it.
      await request.delete('/api/contents/AGENTS.md');
    }
  });

  test("the notebook scrolls to the agent's changed cell, not while the user types in another", async ({
    page,
    request
  }) => {
    const path = 'scrolls.ipynb';
    const id = (index: number) => `cell${String(index).padStart(4, '0')}`;
    await putNotebook(
      request,
      path,
      Array.from({ length: 40 }, (_, index) =>
        codeCell(id(index), `value_${index} = ${index}`)
      )
    );
    const edit = (index: number, source: string) =>
      JSON.stringify({ path, cell_id: id(index), source });
    await loadScript(request, [
      { tool_calls: [['edit_cell', edit(39, 'value_39 = "changed"')]] },
      { text: 'Changed the last cell.' },
      // Slow to arrive: the user is typing in the first cell by then.
      {
        tool_calls: [['edit_cell', edit(38, 'value_38 = "changed"')]],
        pieces: 3,
        delay: 1.5
      },
      { text: 'Changed another.' }
    ]);
    await openWith(page, path, 'Notebook');
    const cells = notebookCells(page);
    await expect(cells.first()).toBeInViewport();
    const panel = await openPanel(page);
    await panel
      .locator(
        '.jp-hdsp-ComposerToolbar select:has(option[value="accept-edits"])'
      )
      .selectOption('accept-edits');
    await sendInNewChat(panel, 'Change the last cell');
    await expect(
      panel.locator('.jp-hdsp-Message-assistant').last()
    ).toContainText('Changed the last cell.', { timeout: 60_000 });
    // The changed cell came into view (the focus stayed in the sidebar).
    await expect(cells.nth(39)).toContainText('changed');
    await expect(cells.nth(39)).toBeInViewport();
    await expect(cells.first()).not.toBeInViewport();

    // The user goes back to the first cell and types while the next change arrives: the view stays.
    const input = panel.getByRole('textbox', { name: 'Message' });
    await input.fill('Change another one');
    await input.press('Enter');
    await cells.first().scrollIntoViewIfNeeded();
    await cells.first().locator('.jp-InputArea-editor').click();
    await page.keyboard.type('  # mine');
    await expect(
      panel.locator('.jp-hdsp-Message-assistant').last()
    ).toContainText('Changed another.', { timeout: 60_000 });
    await expect(cells.nth(38)).toContainText('changed');
    await expect(cells.first()).toBeInViewport();
    await expect(cells.first()).toContainText('value_0 = 0  # mine');
    await expect(cells.nth(38)).not.toBeInViewport();
  });
});
