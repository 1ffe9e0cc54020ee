import { expect, IJupyterLabPageFixture, test } from '@jupyterlab/galata';
import { APIRequestContext } from '@playwright/test';

import {
  failOnConsoleErrors,
  loadScript,
  openPanel,
  screenshot,
  sendInNewChat,
  cellsOnDisk,
  notebookCells,
  openWith
} from './helpers';

/**
 * The agent's changes survive the tab (issue 21, reproductions 3 and 4): a reload or a closed tab in the
 * middle of a turn loses nothing, and agent edits are saved at the end of the turn unless the user has
 * unsaved edits of their own in the document.
 */

/**
 * The notebook's cell sources on disk (null while a save is writing it and it cannot be read).
 */
/**
 * A notebook saved with one code cell, opened. Written through the contents API (not File > New and a
 * rename): the layout a reload restores then names the notebook by its real path.
 */
async function newSavedNotebook(
  page: IJupyterLabPageFixture,
  request: APIRequestContext,
  path: string,
  source: string
): Promise<void> {
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
        source,
        metadata: {},
        outputs: [],
        execution_count: null
      }
    ]
  };
  const response = await request.put(`/api/contents/${path}`, {
    data: { type: 'notebook', format: 'json', content }
  });
  expect(response.ok()).toBeTruthy();
  await page.notebook.openByPath(path);
  await expect(notebookCells(page)).toHaveCount(1);
}

/**
 * Reload the page as the user does (F5), saying yes to JupyterLab's "leave with unsaved changes?". Not
 * galata's reload, which waits for a Launcher the restored layout does not have.
 */
async function reload(page: IJupyterLabPageFixture): Promise<void> {
  const leave = (dialog: any) => void dialog.accept();
  page.on('dialog', leave);
  const loaded = page.waitForEvent('load');
  await page.evaluate(() => {
    window.setTimeout(() => window.location.reload(), 0);
  });
  await loaded;
  page.off('dialog', leave);
  await page.waitForSelector('#jupyterlab-splash', { state: 'detached' });
}

test.describe('the agent changes survive the tab', () => {
  failOnConsoleErrors();

  test('a reload mid-turn keeps the agent cells, the later steps land with them, and the turn saves', async ({
    page,
    request,
    tmpPath
  }, testInfo) => {
    const path = `${tmpPath}/reload.ipynb`;
    await loadScript(request, [
      {
        tool_calls: [['insert_cell', JSON.stringify({ path, source: 'a = 1' })]]
      },
      {
        tool_calls: [['insert_cell', JSON.stringify({ path, source: 'b = 2' })]]
      },
      { text: 'Added two cells.' }
    ]);
    await newSavedNotebook(page, request, path, 'x = 1');
    let panel = await openPanel(page);
    await sendInNewChat(panel, 'Add two cells');
    const approval = () =>
      panel.getByRole('dialog', { name: /^Insert a cell into .*\?$/ });
    await approval().getByRole('button', { name: 'Allow once' }).click();
    await expect(notebookCells(page)).toHaveCount(2);
    // The second step waits for the user: the page reloads now, the first cell only in the tab.
    await expect(approval()).toBeVisible();
    expect(await cellsOnDisk(request, path)).toEqual(['x = 1']);

    await reload(page);
    await page.notebook.openByPath(path);
    // The reopened notebook gets the agent's cell back from the server's journal.
    await expect(notebookCells(page)).toHaveCount(2);
    await expect(notebookCells(page).nth(1)).toContainText('a = 1');

    panel = await openPanel(page);
    await approval().getByRole('button', { name: 'Allow once' }).click();
    await expect(
      panel.locator('.jp-hdsp-Message-assistant').last()
    ).toContainText('Added two cells.');
    await expect(notebookCells(page)).toHaveCount(3);
    await expect(notebookCells(page).nth(2)).toContainText('b = 2');
    await screenshot(page, testInfo, 'reloaded-turn-done.png');

    // Saved at the end of the turn (the user had no unsaved edits), through the tab: not dirty.
    expect(await cellsOnDisk(request, path)).toEqual([
      'x = 1',
      'a = 1',
      'b = 2'
    ]);
    await expect(
      page.locator('.jp-NotebookPanel:visible').first()
    ).not.toHaveClass(/jp-mod-dirty/);
    await expect(page.locator('.lm-TabBar-tab.jp-mod-dirty')).toHaveCount(0);
  });

  test('a tab closed mid-turn: the agent cells and the later steps are in the file', async ({
    page,
    request,
    tmpPath
  }) => {
    const path = `${tmpPath}/closed.ipynb`;
    await loadScript(request, [
      {
        tool_calls: [['insert_cell', JSON.stringify({ path, source: 'a = 1' })]]
      },
      // Streams slowly: the tab is closed before this step runs.
      {
        tool_calls: [
          ['insert_cell', JSON.stringify({ path, source: 'b = 2' })]
        ],
        delay: 1.5
      },
      { text: 'Added two cells.' }
    ]);
    await newSavedNotebook(page, request, path, 'x = 1');
    const panel = await openPanel(page);
    await sendInNewChat(panel, 'Add two cells');
    await panel
      .getByRole('dialog', { name: /^Insert a cell into .*\?$/ })
      .getByRole('button', { name: 'Allow for this chat' })
      .click();
    await expect(notebookCells(page)).toHaveCount(2);
    expect(await cellsOnDisk(request, path)).toEqual(['x = 1']);

    await page.close();

    await expect
      .poll(() => cellsOnDisk(request, path), { timeout: 45_000 })
      .toEqual(['x = 1', 'a = 1', 'b = 2']);
  });

  test('with unsaved typing of the user the turn does not save, and a reload keeps the agent cell', async ({
    page,
    request,
    tmpPath
  }) => {
    const path = `${tmpPath}/dirty.ipynb`;
    await loadScript(request, [
      {
        tool_calls: [['insert_cell', JSON.stringify({ path, source: 'a = 1' })]]
      },
      { text: 'Added a cell.' }
    ]);
    await newSavedNotebook(page, request, path, 'x = 1');
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

    // Not saved behind the user's back: the file is as they last saved it, the notebook still dirty.
    expect(await cellsOnDisk(request, path)).toEqual(['x = 1']);
    await expect(page.locator('.lm-TabBar-tab.jp-mod-dirty')).toHaveCount(1);

    // The user reloads without saving: their typing goes (JupyterLab asked), the agent's cell stays.
    await reload(page);
    await page.notebook.openByPath(path);
    await expect(notebookCells(page)).toHaveCount(2);
    await expect(notebookCells(page).nth(0)).toContainText('x = 1');
    await expect(notebookCells(page).nth(1)).toContainText('a = 1');

    // Their save (Ctrl+S: galata's in-page helpers are gone after a reload of the page) writes it.
    await notebookCells(page).nth(1).locator('.jp-InputPrompt').click();
    await page.keyboard.press('Control+s');
    await expect
      .poll(() => cellsOnDisk(request, path))
      .toEqual(['x = 1', 'a = 1']);
    await expect(page.locator('.lm-TabBar-tab.jp-mod-dirty')).toHaveCount(0);
  });

  test('an agent edit to a file the user is typing in goes into the editor, merged, and their save keeps both', async ({
    page,
    request,
    tmpPath
  }, testInfo) => {
    const path = `${tmpPath}/utils.py`;
    const original =
      'def load():\n    return 1\n\n\ndef clean():\n    return 2\n';
    const put = await request.put(`/api/contents/${path}`, {
      data: { type: 'file', format: 'text', content: original }
    });
    expect(put.ok()).toBeTruthy();
    await loadScript(request, [
      {
        tool_calls: [
          [
            'single_find_and_replace',
            JSON.stringify({
              filepath: path,
              old_string: '    return 2',
              new_string: '    return 20'
            })
          ]
        ]
      },
      { text: 'Changed clean() to return 20.' }
    ]);
    await openWith(page, path, 'Editor');
    const editor = page.locator('.jp-FileEditor:visible .cm-content');
    await expect(editor).toContainText('return 2');
    // The user types a line at the top and does not save.
    await editor.click();
    await page.keyboard.press('Control+Home');
    await page.keyboard.type('# typed, not saved\n');
    await expect(page.locator('.lm-TabBar-tab.jp-mod-dirty')).toHaveCount(1);

    const panel = await openPanel(page);
    await sendInNewChat(panel, 'Make clean() return 20');
    await panel
      .getByRole('dialog', { name: /utils\.py\?$/ })
      .getByRole('button', { name: 'Allow once' })
      .click();
    await expect(
      panel.locator('.jp-hdsp-Message-assistant').last()
    ).toContainText('Changed clean() to return 20.');

    // The editor shows both; the file on disk is untouched (the user has unsaved edits: not saved).
    await expect(editor).toContainText('# typed, not saved');
    await expect(editor).toContainText('return 20');
    const onDisk = async () =>
      (await (await request.get(`/api/contents/${path}?content=1`)).json())
        .content;
    expect(await onDisk()).toBe(original);
    await screenshot(page, testInfo, 'editor-merged.png');

    // The user saves: no "File Changed" question, and the file has both.
    await editor.click();
    await page.keyboard.press('Control+s');
    await expect
      .poll(onDisk)
      .toBe('# typed, not saved\n' + original.replace('return 2', 'return 20'));
    await expect(page.locator('.jp-Dialog')).toHaveCount(0);
    await expect(page.locator('.lm-TabBar-tab.jp-mod-dirty')).toHaveCount(0);
  });
});
