import { expect, test } from '@jupyterlab/galata';

import {
  failOnConsoleErrors,
  loadScript,
  openPanel,
  screenshot,
  sendInNewChat
} from './helpers';

test.describe('hdsp-agent in the open notebook', () => {
  failOnConsoleErrors();

  test('an agent cell runs live in the open notebook and the unsaved edit survives', async ({
    page,
    request,
    tmpPath
  }, testInfo) => {
    const code =
      'import time\nfor i in range(3):\n    print(f"step {i}", flush=True)\n    time.sleep(1)\nprint(6*7)';
    await loadScript(request, [
      // One cell read from the open tab (the bridge's read_cell), then the run.
      { tool_calls: [['read_cell', JSON.stringify({ index: 0 })]] },
      { tool_calls: [['run_cell', JSON.stringify({ code })]] },
      { text: 'Done: **42**.' }
    ]);
    await page.notebook.createNew('live.ipynb');
    await page.notebook.setCell(0, 'code', 'x = 1');
    await page.notebook.save();
    // The user types in the cell and does not save.
    await page.notebook.setCell(0, 'code', 'x = 1  # typed, not saved');
    const notebook = page.locator('.jp-NotebookPanel:visible');
    await expect(notebook.locator('.jp-Cell').first()).toContainText(
      'typed, not saved'
    );

    const panel = await openPanel(page);
    await sendInNewChat(panel, 'Count to three, then compute 6*7');
    const dialog = panel.getByRole('dialog', {
      name: /^Run a cell in .*\.ipynb\?$/
    });
    await dialog.getByRole('button', { name: 'Allow once' }).click();

    // The cell was read from the tab, with the user's unsaved typing.
    const read = panel.locator('.jp-hdsp-ToolCard').first();
    await expect(read).toHaveAttribute('data-status', 'done');
    // While the kernel is still running it, the new cell shows its outputs so far and [*].
    const card = panel.locator('.jp-hdsp-ToolCard').nth(1);
    const agentCell = notebook.locator('.jp-Cell').nth(1);
    await expect(agentCell.locator('.jp-OutputArea-output')).toContainText(
      'step 0'
    );
    await expect(agentCell.locator('.jp-InputPrompt')).toContainText('*');
    await expect(card).toHaveAttribute('data-status', 'calling');
    await screenshot(page, testInfo, 'live-run-streaming.png');

    await expect(card).toHaveAttribute('data-status', 'done', {
      timeout: 60_000
    });
    await expect(agentCell.locator('.jp-OutputArea-output')).toHaveText(
      'step 0\nstep 1\nstep 2\n42'
    );
    await expect(agentCell.locator('.jp-InputPrompt')).toContainText('[1]');
    await expect(notebook.locator('.jp-Cell').first()).toContainText(
      'typed, not saved'
    );
    await expect(
      panel.locator('.jp-hdsp-Message-assistant').last()
    ).toContainText('Done: 42.');
    await screenshot(page, testInfo, 'live-run-done.png');

    // The change went to the open notebook, not behind its back to the file: on disk it is as saved.
    const path = `${tmpPath}/live.ipynb`;
    const saved = await (
      await request.get(`/api/contents/${path}?content=1&type=notebook`)
    ).json();
    expect(saved.content.cells.map((cell: any) => cell.source)).toEqual([
      'x = 1'
    ]);

    // Saving keeps both: the user's edit and the agent's cell with its output.
    await page.notebook.save();
    const after = await (
      await request.get(`/api/contents/${path}?content=1&type=notebook`)
    ).json();
    expect(after.content.cells.map((cell: any) => cell.source)).toEqual([
      'x = 1  # typed, not saved',
      code
    ]);
    expect(after.content.cells[1].outputs[0].text).toBe(
      'step 0\nstep 1\nstep 2\n42\n'
    );
  });
});
