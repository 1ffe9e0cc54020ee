import { expect, IJupyterLabPageFixture, test } from '@jupyterlab/galata';

import { restartLab } from '../restartLab';
import {
  failOnConsoleErrors,
  loadScript,
  openPanel,
  screenshot,
  sendInNewChat,
  cellsOnDisk,
  notebookCells
} from './helpers';

/**
 * A restart of the Jupyter server keeps the agent's unsaved changes and its undo (issue 26, "restart-safe"):
 * the journal and the undo history live in the conversation store, not only in the server's memory.
 */

/**
 * Load the lab again, as a reload does, saying yes to "leave with unsaved changes?"; through galata's goto so
 * its in-page helpers are there again (a busy machine may need more than galata's 15 s for a page).
 */
async function reload(page: IJupyterLabPageFixture): Promise<void> {
  const leave = (dialog: any) => void dialog.accept();
  page.on('dialog', leave);
  await expect(async () => {
    await page.goto();
  }).toPass({ timeout: 120_000 });
  page.off('dialog', leave);
}

// galata proxies the page's kernel, session and terminal requests through the test to track them: with the
// server stopped for a while those fetches would fail the test. The page asks the server itself instead.
// The app is ready when its splash is gone (galata's own check waits for a Launcher tab, slow on a busy
// machine and not what this test uses).
test.use({
  autoGoto: false,
  kernels: null,
  sessions: null,
  terminals: null,
  waitForApplication: async ({}, use) => {
    await use(async page => {
      await page
        .locator('#jupyterlab-splash')
        .waitFor({ state: 'detached', timeout: 60_000 });
    });
  }
});

test.describe('a server restart', () => {
  // The page loses its server for a while: its failed requests and sockets meanwhile are expected.
  failOnConsoleErrors([
    /ERR_CONNECTION_REFUSED/,
    /WebSocket/,
    /Failed to fetch/,
    /Failed to load resource/,
    /Connection lost/i,
    /NetworkError/
  ]);
  test.setTimeout(240_000);

  test('keeps the agent cells unsaved in the open notebook and their Undo', async ({
    page,
    request,
    tmpPath
  }, testInfo) => {
    const path = `${tmpPath}/restart.ipynb`;
    await reload(page);
    await loadScript(request, [
      {
        tool_calls: [
          ['insert_cell', JSON.stringify({ path, source: 'agent_cell = 1' })]
        ]
      },
      { text: 'Added a cell.' }
    ]);
    const content = {
      nbformat: 4,
      nbformat_minor: 5,
      metadata: {
        kernelspec: {
          name: 'python3',
          display_name: 'Python 3 (ipykernel)',
          language: 'python'
        }
      },
      cells: [
        {
          id: 'user-cell',
          cell_type: 'code',
          source: 'x = 1',
          metadata: {},
          outputs: [],
          execution_count: null
        }
      ]
    };
    const put = await request.put(`/api/contents/${path}`, {
      data: { type: 'notebook', format: 'json', content }
    });
    expect(put.ok()).toBeTruthy();
    await page.notebook.openByPath(path);
    await expect(notebookCells(page)).toHaveCount(1);
    // The user's own unsaved typing: the end of the turn leaves the agent's cell unsaved too.
    await page.notebook.setCell(0, 'code', 'x = 1  # typed, not saved');

    const panel = await openPanel(page);
    await sendInNewChat(panel, 'Add a cell');
    await panel
      .getByRole('dialog', { name: /^Insert a cell into .*\?$/ })
      .getByRole('button', { name: 'Allow once' })
      .click();
    await expect(
      panel.locator('.jp-hdsp-Message-assistant').last()
    ).toContainText('Added a cell.');
    await expect(notebookCells(page)).toHaveCount(2);
    expect(await cellsOnDisk(request, path)).toEqual(['x = 1']);

    await restartLab();
    // The agent's cell is in the restarted server's journal, not in the file.
    expect(await cellsOnDisk(request, path)).toEqual(['x = 1']);

    await reload(page);
    // The reloaded page restores its workspace, the notebook's tab included (the file browser stays in the
    // notebook's folder then, where galata's openByPath cannot find the folder): open it only if it is not.
    if (!(await page.notebook.isOpen('restart.ipynb'))) {
      await page.notebook.openByPath(path);
    }
    await page.notebook.activate('restart.ipynb');
    // The reopened notebook gets the agent's cell back from the stored journal.
    await expect(notebookCells(page)).toHaveCount(2);
    await expect(notebookCells(page).nth(0)).toContainText('x = 1');
    await expect(notebookCells(page).nth(1)).toContainText('agent_cell = 1');
    await screenshot(page, testInfo, 'restarted-agent-cell-back.png');

    // Undo still works after the restart: the agent's cell goes, the user's stays.
    const reopened = await openPanel(page);
    await expect(
      reopened.locator('.jp-hdsp-Message-assistant').last()
    ).toContainText('Added a cell.');
    await reopened.getByRole('button', { name: 'Undo', exact: true }).click();
    await expect(notebookCells(page)).toHaveCount(1);
    await expect(notebookCells(page).nth(0)).toContainText('x = 1');
    await expect(
      reopened.locator('.jp-hdsp-Notice.jp-mod-undone')
    ).toBeVisible();
  });
});
