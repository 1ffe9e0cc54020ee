import { expect, IJupyterLabPageFixture, test } from '@jupyterlab/galata';
import { APIRequestContext, Locator } from '@playwright/test';

import {
  codeCell,
  failOnConsoleErrors,
  loadScript,
  openPanel,
  pythonNotebook,
  screenshot,
  sendInNewChat
} from './helpers';

/** The text of a file on the server's disk. */
async function onDisk(
  request: APIRequestContext,
  path: string
): Promise<string> {
  const response = await request.get(
    `/api/contents/${path}?content=1&type=file&format=text`
  );
  expect(response.ok()).toBeTruthy();
  return (await response.json()).content;
}

/** The cells of a notebook on the server's disk: id, type and source. */
async function cellsOnDisk(
  request: APIRequestContext,
  path: string
): Promise<[string, string, string][]> {
  const response = await request.get(
    `/api/contents/${path}?content=1&type=notebook`
  );
  const model = await response.json();
  return model.content.cells.map((cell: any) => [
    cell.id,
    cell.cell_type,
    Array.isArray(cell.source) ? cell.source.join('') : cell.source
  ]);
}

async function openDocument(
  page: IJupyterLabPageFixture,
  path: string
): Promise<void> {
  await page.evaluate(async path => {
    await (window as any).jupyterapp.commands.execute('docmanager:open', {
      path
    });
  }, path);
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

async function send(panel: Locator, message: string): Promise<void> {
  const input = panel.getByRole('textbox', { name: 'Message' });
  await input.fill(message);
  await input.press('Enter');
  await expect(panel.locator('.jp-hdsp-Message-user').last()).toContainText(
    message
  );
}

function replace(path: string, old: string, now: string): [string, string] {
  return [
    'single_find_and_replace',
    JSON.stringify({ filepath: path, old_string: old, new_string: now })
  ];
}

/** An nbformat 4.5 notebook (cells with ids) for the python3 kernel. */
function notebookWith(...cells: [string, string][]): object {
  return pythonNotebook(
    cells.map(([type, source], index) =>
      type === 'code'
        ? codeCell(`cell-${index}`, source)
        : { id: `cell-${index}`, cell_type: type, source, metadata: {} }
    )
  );
}

const editorText = (page: IJupyterLabPageFixture) =>
  page.locator('.jp-FileEditor:visible .cm-content');

const currentTab = (page: IJupyterLabPageFixture) =>
  page.locator('.lm-DockPanel-tabBar .lm-TabBar-tab.jp-mod-current');

test.describe('undo that is exact', () => {
  // An undo that conflicts is answered 409, which the browser logs; the sidebar shows it as a message.
  failOnConsoleErrors([/status of 409 \(Conflict\)/]);

  test('undo reloads the open editor, so saving does not bring the agent’s change back', async ({
    page,
    request,
    tmpPath
  }, testInfo) => {
    const path = `${tmpPath}/utils.py`;
    const original = 'def answer():\n    return 41\n';
    await page.contents.uploadContent(original, 'text', path);
    await openDocument(page, path);
    await expect(editorText(page)).toContainText('return 41');
    await loadScript(request, [
      { tool_calls: [replace(path, 'return 41', 'return 42')] },
      { text: 'Changed the answer.' }
    ]);

    const panel = await openPanel(page);
    await sendInNewChat(panel, 'Make the answer 42');
    await untilAnswered(panel, 'Changed the answer.');
    await expect(editorText(page)).toContainText('return 42');

    await panel.getByRole('button', { name: 'Undo', exact: true }).click();
    await expect(panel.locator('.jp-hdsp-Notice.jp-mod-undone')).toContainText(
      'utils.py'
    );
    expect(await onDisk(request, path)).toBe(original);
    // The editor shows the file as it is on disk again, and has nothing unsaved.
    await expect(editorText(page)).toContainText('return 41');
    await expect(editorText(page)).not.toContainText('return 42');
    await expect(currentTab(page)).not.toHaveClass(/jp-mod-dirty/);
    await screenshot(page, testInfo, 'undo-editor-reloaded.png');

    // Saving now writes what the editor shows: the undone file, without a "File Changed" question.
    // (A stale editor asks "File Changed" before it writes anything: then no save would arrive.)
    const saved = page.waitForResponse(
      response =>
        response.request().method() === 'PUT' &&
        response.url().includes('utils.py'),
      { timeout: 15_000 }
    );
    await editorText(page).click();
    await page.keyboard.press('Control+s');
    await saved;
    await expect(page.locator('.jp-Dialog')).toHaveCount(0);
    expect(await onDisk(request, path)).toBe(original);
  });

  test('undo after the user touched the agent’s cell changes nothing and names the cell', async ({
    page,
    request,
    tmpPath
  }, testInfo) => {
    await page.notebook.createNew('touched.ipynb');
    await page.notebook.setCell(0, 'code', 'x = 1');
    await page.notebook.save();
    const path = `${tmpPath}/touched.ipynb`;
    await loadScript(request, [
      {
        tool_calls: [
          ['insert_cell', JSON.stringify({ path, source: 'b = 2' })],
          ['run_cell', JSON.stringify({ path, code: 'a = 1\nprint(a + 6)' })]
        ]
      },
      { text: 'Added b and printed 7.' }
    ]);
    const panel = await openPanel(page);
    await sendInNewChat(panel, 'Add b, then print a + 6');
    await untilAnswered(panel, 'Added b and printed 7.');

    const notebook = page.locator('.jp-NotebookPanel:visible');
    const cells = notebook.locator('.jp-Cell');
    await expect(cells).toHaveCount(3);
    const ran = cells.filter({ hasText: 'print(a + 6)' });
    await expect(ran.locator('.jp-OutputArea-output')).toHaveText('7');
    const prompt = await ran.locator('.jp-InputPrompt').textContent();
    expect(prompt).toMatch(/\[\d+\]/);

    // The user changes the agent's cell, then asks to undo the turn.
    await ran.locator('.cm-content').click();
    await page.keyboard.press('Control+End');
    await page.keyboard.type('  # mine');
    await expect(ran).toContainText('# mine');
    await panel.getByRole('button', { name: 'Undo', exact: true }).click();

    const error = panel.locator('.jp-hdsp-Error');
    await expect(error).toContainText('Nothing was undone');
    await expect(error).toContainText('touched.ipynb');
    await expect(error).toContainText('edited after the agent changed it');
    // Nothing was applied: both agent cells stay, the run keeps its output and execution count.
    await expect(cells).toHaveCount(3);
    await expect(cells.filter({ hasText: 'b = 2' })).toHaveCount(1);
    await expect(ran.locator('.jp-OutputArea-output')).toHaveText('7');
    await expect(ran.locator('.jp-InputPrompt')).toHaveText(prompt!);
    await expect(ran).toContainText('# mine');
    await expect(panel.locator('.jp-hdsp-Notice.jp-mod-undone')).toHaveCount(0);
    await screenshot(page, testInfo, 'undo-conflict.png');
  });

  test('each message is a checkpoint to restore, and a restore can be redone', async ({
    page,
    request,
    tmpPath
  }, testInfo) => {
    const path = `${tmpPath}/notes.txt`;
    await page.contents.uploadContent('one\n', 'text', path);
    await openDocument(page, path);
    await expect(editorText(page)).toContainText('one');
    await loadScript(request, [
      { tool_calls: [replace(path, 'one', 'two')] },
      { text: 'Now two.' },
      { tool_calls: [replace(path, 'two', 'three')] },
      { text: 'Now three.' }
    ]);
    const panel = await openPanel(page);
    await sendInNewChat(panel, 'Make it two');
    await untilAnswered(panel, 'Now two.');
    await send(panel, 'Make it three');
    await untilAnswered(panel, 'Now three.');
    await expect(editorText(page)).toContainText('three');

    // Back to before the first message, from the keyboard: both turns are undone.
    // Each user message is followed by its checkpoint's button.
    const restore = panel
      .getByRole('button', { name: 'Restore to here' })
      .first();
    await restore.focus();
    await page.keyboard.press('Enter');
    const undone = panel.locator('.jp-hdsp-Notice.jp-mod-undone');
    await expect(undone).toContainText('2 turns undone');
    expect(await onDisk(request, path)).toBe('one\n');
    await expect(editorText(page)).toContainText('one');
    await expect(
      panel.getByRole('button', { name: 'Restore to here' })
    ).toHaveCount(0);
    await screenshot(page, testInfo, 'checkpoint-restored.png');

    // Redo puts both turns back; they are checkpoints again.
    await undone.getByRole('button', { name: 'Redo' }).click();
    await expect(panel.locator('.jp-hdsp-Notice.jp-mod-redone')).toBeVisible();
    expect(await onDisk(request, path)).toBe('three\n');
    await expect(editorText(page)).toContainText('three');
    await expect(undone.getByRole('button', { name: 'Redo' })).toHaveCount(0);
    await expect(
      panel.getByRole('button', { name: 'Restore to here' })
    ).toHaveCount(2);

    // Restoring the second message's checkpoint undoes only the second turn.
    await panel.getByRole('button', { name: 'Restore to here' }).nth(1).click();
    await expect(undone.last()).toContainText('Undid the last turn');
    expect(await onDisk(request, path)).toBe('two\n');
    await expect(editorText(page)).toContainText('two');
  });

  test('an undo after a reload restores every file and cell the turn touched exactly', async ({
    page,
    request,
    tmpPath
  }, testInfo) => {
    const data = `${tmpPath}/data.py`;
    await page.contents.uploadContent('A = 1\n', 'text', data);
    const path = `${tmpPath}/reload.ipynb`;
    await page.contents.uploadContent(
      JSON.stringify(notebookWith(['code', 'x = 1'], ['markdown', '# Notes'])),
      'text',
      path
    );
    await openDocument(page, path);
    await expect(
      page.locator('.jp-NotebookPanel:visible .jp-Cell')
    ).toHaveCount(2);
    const before = await cellsOnDisk(request, path);
    expect(before.map(cell => cell[2])).toEqual(['x = 1', '# Notes']);
    await loadScript(request, [
      {
        tool_calls: [
          ['insert_cell', JSON.stringify({ path, source: 'z = 3' })],
          [
            'edit_cell',
            JSON.stringify({ path, cell_id: before[0][0], source: 'x = 100' })
          ],
          replace(data, 'A = 1', 'A = 2')
        ]
      },
      { text: 'Changed x, added z and A.' }
    ]);
    let panel = await openPanel(page);
    await sendInNewChat(panel, 'Change things');
    await untilAnswered(panel, 'Changed x, added z and A.');
    const notebook = page.locator('.jp-NotebookPanel:visible');
    await expect(notebook.locator('.jp-Cell')).toHaveCount(3);
    // The user keeps the agent's work for now: saves, and later reloads the page.
    await page.notebook.save();
    expect(await onDisk(request, data)).toBe('A = 2\n');

    // (galata's readiness check waits for the Launcher, which the restored layout does not show.)
    await page.reload({ waitForIsReady: false });
    await page.waitForFunction(() => (window as any).jupyterapp?.restored);
    await page.evaluate(() => (window as any).jupyterapp.restored);
    if (!(await notebook.isVisible())) {
      await openDocument(page, path);
    }
    await expect(notebook.locator('.jp-Cell')).toHaveCount(3);
    panel = await openPanel(page);
    await expect(
      panel.locator('.jp-hdsp-Message-user .jp-hdsp-Message-text')
    ).toHaveText(['Change things']);
    await panel.getByRole('button', { name: 'Undo', exact: true }).click();
    await expect(panel.locator('.jp-hdsp-Notice.jp-mod-undone')).toBeVisible();

    expect(await onDisk(request, data)).toBe('A = 1\n');
    await expect(notebook.locator('.jp-Cell')).toHaveCount(2);
    await page.notebook.save();
    expect(await cellsOnDisk(request, path)).toEqual(before);
    await screenshot(page, testInfo, 'undo-after-reload.png');
  });
});
