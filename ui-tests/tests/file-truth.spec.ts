import { expect, IJupyterLabPageFixture, test } from '@jupyterlab/galata';
import { APIRequestContext, Locator } from '@playwright/test';

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
 * The file is the truth the user sees (issue 26, problems 5, 6 and 8): an undo reaches the file, a notebook
 * made from the launcher is saved by the agent like any other, closing a notebook ends the agent's work on
 * it, and a hunk's Undo never saves what the user typed and did not save.
 */

const dirtyTabs = (page: IJupyterLabPageFixture) =>
  page.locator('.lm-DockPanel-tabBar .lm-TabBar-tab.jp-mod-dirty');

/** A notebook saved with one code cell, opened. */
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

/** Wait for the agent's answer, allowing each call that asks on the way. */
async function untilAnswered(panel: Locator, answer: string): Promise<void> {
  const allow = panel.getByRole('button', { name: 'Allow once' });
  const last = panel.locator('.jp-hdsp-Message-assistant').last();
  await expect(async () => {
    if (await allow.first().isVisible()) {
      await allow.first().click();
    }
    await expect(last).toContainText(answer, { timeout: 1000 });
  }).toPass({ timeout: 60_000 });
}

function insert(path: string, source: string): [string, string] {
  return ['insert_cell', JSON.stringify({ path, source })];
}

test.describe('the file is the truth the user sees', () => {
  // A refused call is logged by nobody; a conflict (409) would be, and is not expected here.
  failOnConsoleErrors();

  test('undo and redo of a saved agent change reach the file: disk and tab agree, nothing dirty', async ({
    page,
    request,
    tmpPath
  }, testInfo) => {
    const path = `${tmpPath}/undo.ipynb`;
    await newSavedNotebook(page, request, path, 'x = 1');
    await loadScript(request, [
      { tool_calls: [insert(path, 'a = 1')] },
      { text: 'Added a cell.' }
    ]);
    const panel = await openPanel(page);
    await sendInNewChat(panel, 'Add a cell');
    await untilAnswered(panel, 'Added a cell.');
    await expect
      .poll(() => cellsOnDisk(request, path))
      .toEqual(['x = 1', 'a = 1']);
    await expect(dirtyTabs(page)).toHaveCount(0);

    await panel.getByRole('button', { name: 'Undo', exact: true }).click();
    await expect(panel.locator('.jp-hdsp-Notice.jp-mod-undone')).toBeVisible();
    await expect(notebookCells(page)).toHaveCount(1);
    // The undo is in the file too, and the tab has nothing unsaved: a Discard or a restart cannot bring
    // the agent's cell back.
    await expect.poll(() => cellsOnDisk(request, path)).toEqual(['x = 1']);
    await expect(dirtyTabs(page)).toHaveCount(0);
    await screenshot(page, testInfo, 'undone-saved.png');

    await panel.getByRole('button', { name: 'Redo' }).click();
    await expect(notebookCells(page)).toHaveCount(2);
    await expect
      .poll(() => cellsOnDisk(request, path))
      .toEqual(['x = 1', 'a = 1']);
    await expect(dirtyTabs(page)).toHaveCount(0);
  });

  test('undo with the user’s own unsaved typing: the file keeps what was saved, only the typing is unsaved', async ({
    page,
    request,
    tmpPath
  }) => {
    const path = `${tmpPath}/undo-typed.ipynb`;
    await newSavedNotebook(page, request, path, 'x = 1');
    await loadScript(request, [
      { tool_calls: [insert(path, 'a = 1')] },
      { text: 'Added a cell.' }
    ]);
    const panel = await openPanel(page);
    await sendInNewChat(panel, 'Add a cell');
    await untilAnswered(panel, 'Added a cell.');
    await expect
      .poll(() => cellsOnDisk(request, path))
      .toEqual(['x = 1', 'a = 1']);

    // The user types in their cell and does not save; then undoes the turn.
    await notebookCells(page).nth(0).locator('.cm-content').click();
    await page.keyboard.press('End');
    await page.keyboard.type('  # mine');
    await expect(dirtyTabs(page)).toHaveCount(1);
    await panel.getByRole('button', { name: 'Undo', exact: true }).click();
    await expect(notebookCells(page)).toHaveCount(1);
    await expect(notebookCells(page).nth(0)).toContainText('x = 1  # mine');
    // Their typing is not saved behind their back; the tab is dirty for it alone.
    await expect(dirtyTabs(page)).toHaveCount(1);
    expect(await cellsOnDisk(request, path)).toEqual(['x = 1', 'a = 1']);
  });

  test('a notebook made from the launcher: the agent’s cells are saved at the end of the turn', async ({
    page,
    request
  }, testInfo) => {
    await page
      .locator('.jp-LauncherCard[data-category="Notebook"]')
      .first()
      .click();
    await expect(notebookCells(page)).toHaveCount(1);
    const path: string = await page.evaluate(
      () => (window as any).jupyterapp.shell.currentWidget.context.path
    );
    await loadScript(request, [
      { tool_calls: [insert(path, 'a = 1')] },
      { text: 'Added a cell.' }
    ]);
    const panel = await openPanel(page);
    await sendInNewChat(panel, 'Add a cell');
    await untilAnswered(panel, 'Added a cell.');
    // The launcher's empty cell got the agent's code (no empty cell left above it).
    await expect(notebookCells(page)).toHaveCount(1);
    // Saved like any other notebook: the file has the agent's cell, the tab nothing unsaved.
    await expect.poll(() => cellsOnDisk(request, path)).toEqual(['a = 1']);
    await expect(dirtyTabs(page)).toHaveCount(0);
    await screenshot(page, testInfo, 'launcher-saved.png');
  });

  test('closing a notebook with Discard ends the agent’s work on it: nothing more is written, the chat says so', async ({
    page,
    request,
    tmpPath
  }, testInfo) => {
    const path = `${tmpPath}/analysis.ipynb`;
    await newSavedNotebook(page, request, path, 'x = 1');
    await loadScript(request, [
      { tool_calls: [insert(path, 'a = 1')] },
      // Streams slowly: the user closes the notebook before this step runs.
      { tool_calls: [insert(path, 'b = 2')], delay: 2 },
      { text: 'Added two cells.' }
    ]);
    const panel = await openPanel(page);
    await sendInNewChat(panel, 'Add two cells');
    await panel
      .getByRole('dialog', { name: /^Insert a cell into .*\?$/ })
      .getByRole('button', { name: 'Allow for this chat' })
      .click();
    await expect(notebookCells(page)).toHaveCount(2);

    // The user closes the notebook and discards the agent's unsaved cell.
    await page
      .locator(
        '.lm-DockPanel-tabBar .lm-TabBar-tab.jp-mod-current .lm-TabBar-tabCloseIcon'
      )
      .click();
    await page
      .locator('.jp-Dialog')
      .getByRole('button', { name: 'Discard' })
      .click();
    await expect(page.locator('.jp-NotebookPanel:visible')).toHaveCount(0);

    await expect(
      panel.locator('.jp-hdsp-Message-assistant').last()
    ).toContainText('Added two cells.', { timeout: 45_000 });
    // The next step was refused, as data on its card: the notebook is closed.
    await expect(panel.locator('.jp-hdsp-ToolCard').last()).toContainText(
      'was closed in JupyterLab'
    );
    await screenshot(page, testInfo, 'closed-refused.png');
    // "Discard" means discard: the file is as the user last saved it, also after the turn ended.
    await page.waitForTimeout(1000);
    expect(await cellsOnDisk(request, path)).toEqual(['x = 1']);
  });

  test('a hunk’s Undo in an editor with unsaved typing never saves the typing', async ({
    page,
    request,
    tmpPath
  }) => {
    const path = `${tmpPath}/utils.py`;
    const original =
      'def load():\n    return 1\n\n\ndef clean():\n    return 2\n';
    await page.contents.uploadContent(original, 'text', path);
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
      { text: 'Changed clean().' }
    ]);
    await openWith(page, path, 'Editor');
    const editor = page.locator('.jp-FileEditor:visible .cm-content');
    await expect(editor).toContainText('return 2');
    const panel = await openPanel(page);
    await sendInNewChat(panel, 'Make clean() return 20');
    await untilAnswered(panel, 'Changed clean().');
    await expect(editor).toContainText('return 20');

    // The user types a line at the top and does not save; then clicks the hunk's Undo.
    await editor.click();
    await page.keyboard.press('Control+Home');
    await page.keyboard.type('# typed, not saved\n');
    await expect(dirtyTabs(page)).toHaveCount(1);
    await page
      .locator('.jp-FileEditor:visible .jp-hdsp-HunkBar')
      .getByRole('button', { name: 'Undo' })
      .click();
    await page.waitForTimeout(1000);
    const onDisk = async () =>
      (await (await request.get(`/api/contents/${path}?content=1`)).json())
        .content;
    // What the user typed stays theirs to save: not on disk, still in the editor.
    expect(await onDisk()).not.toContain('# typed, not saved');
    await expect(editor).toContainText('# typed, not saved');
  });
});
