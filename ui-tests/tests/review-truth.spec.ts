import { expect, IJupyterLabPageFixture, test } from '@jupyterlab/galata';
import { APIRequestContext, Locator } from '@playwright/test';

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
 * The review does what the user sees (issue 26, problem 7): Keep is final (undo-all and restore leave a kept
 * cell, and a reload remembers it), a turn's marks stay after the next message until kept or undone, and a
 * cell of the user's that the agent only ran is not marked as the agent's.
 */

/**
 * Open a document by command, not through the file browser (galata's helper waits for the browser to list
 * the folder, which a slow machine or a page just reloaded may not have done yet).
 */
async function openByCommand(
  page: IJupyterLabPageFixture,
  path: string
): Promise<void> {
  await page.waitForFunction(() =>
    (window as any).jupyterapp?.commands?.hasCommand('docmanager:open')
  );
  await page.evaluate(async file => {
    await (window as any).jupyterapp.commands.execute('docmanager:open', {
      path: file
    });
  }, path);
}

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
  await openByCommand(page, path);
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

/**
 * Reload the page as the user does (F5), saying yes to JupyterLab's "leave with unsaved changes?".
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

const badges = (page: IJupyterLabPageFixture) =>
  page.locator('.jp-NotebookPanel:visible .jp-hdsp-ReviewBadge');

async function send(panel: Locator, message: string): Promise<void> {
  const input = panel.getByRole('textbox', { name: 'Message' });
  await input.fill(message);
  await input.press('Enter');
  await expect(panel.locator('.jp-hdsp-Message-user').last()).toContainText(
    message
  );
}

test.describe('the review does what the user sees', () => {
  failOnConsoleErrors();

  test('a kept cell survives the next message, a reload and a restore; the other cell stays reviewable', async ({
    page,
    request,
    tmpPath
  }, testInfo) => {
    test.setTimeout(180_000); // two turns and a reload
    const path = `${tmpPath}/keep.ipynb`;
    await newSavedNotebook(page, request, path, 'x = 1');
    await loadScript(request, [
      { tool_calls: [insert(path, 'a = 1'), insert(path, 'b = 2')] },
      { text: 'Added two cells.' },
      { text: 'Nothing else.' }
    ]);
    let panel = await openPanel(page);
    await sendInNewChat(panel, 'Add two cells');
    await untilAnswered(panel, 'Added two cells.');
    await expect(badges(page)).toHaveCount(2);

    const cellA = notebookCells(page).filter({ hasText: 'a = 1' });
    await cellA.getByRole('button', { name: 'Keep', exact: true }).click();
    await expect(badges(page)).toHaveCount(1);

    // The next message does not take the other cell's mark away.
    await send(panel, 'Anything else?');
    await untilAnswered(panel, 'Nothing else.');
    await expect(badges(page)).toHaveCount(1);
    await expect(
      notebookCells(page)
        .filter({ hasText: 'b = 2' })
        .locator('.jp-hdsp-ReviewBadge')
    ).toHaveCount(1);

    // A reload remembers the Keep.
    await reload(page);
    await openByCommand(page, path);
    // A reloaded page on a busy machine takes a while to render the notebook.
    await expect(notebookCells(page)).toHaveCount(3, { timeout: 45_000 });
    panel = await openPanel(page);
    await expect(panel.locator('.jp-hdsp-Message-user').first()).toContainText(
      'Add two cells'
    );
    await expect(
      notebookCells(page)
        .filter({ hasText: 'b = 2' })
        .locator('.jp-hdsp-ReviewBadge')
    ).toHaveCount(1);
    await expect(badges(page)).toHaveCount(1);
    await screenshot(page, testInfo, 'kept-after-reload.png');

    // Restore to before the first message: the kept cell stays, the other goes, the file agrees.
    await panel
      .getByRole('button', { name: 'Restore to here' })
      .first()
      .click();
    await expect(panel.locator('.jp-hdsp-Notice.jp-mod-undone')).toBeVisible();
    await expect(notebookCells(page)).toHaveCount(2);
    await expect(notebookCells(page).nth(1)).toContainText('a = 1');
    await expect
      .poll(() => cellsOnDisk(request, path))
      .toEqual(['x = 1', 'a = 1']);
    await expect(badges(page)).toHaveCount(0);
  });

  test('a cell of the user that the agent only ran is not marked as new', async ({
    page,
    request,
    tmpPath
  }) => {
    const path = `${tmpPath}/ran.ipynb`;
    await newSavedNotebook(page, request, path, 'print(6 * 7)');
    await loadScript(request, [
      {
        tool_calls: [
          ['run_cell', JSON.stringify({ path, cell_id: 'user-cell' })]
        ]
      },
      { text: 'It printed 42.' }
    ]);
    const panel = await openPanel(page);
    await sendInNewChat(panel, 'Run my cell');
    await untilAnswered(panel, 'It printed 42.');
    await expect(notebookCells(page).first()).toContainText('42');
    await expect(badges(page)).toHaveCount(0);
  });

  test('Undo all takes back the marked cells of every turn, not only the last', async ({
    page,
    request,
    tmpPath
  }) => {
    test.setTimeout(150_000); // two turns
    const path = `${tmpPath}/undo-all.ipynb`;
    await newSavedNotebook(page, request, path, 'x = 1');
    await loadScript(request, [
      { tool_calls: [insert(path, 'a = 1')] },
      { text: 'Added a.' },
      { tool_calls: [insert(path, 'b = 2')] },
      { text: 'Added b.' }
    ]);
    const panel = await openPanel(page);
    await sendInNewChat(panel, 'Add a');
    await untilAnswered(panel, 'Added a.');
    await send(panel, 'Add b');
    await untilAnswered(panel, 'Added b.');
    await expect(badges(page)).toHaveCount(2);

    await panel.getByRole('button', { name: 'Undo all' }).click();
    await expect(notebookCells(page)).toHaveCount(1);
    await expect(badges(page)).toHaveCount(0);
    await expect.poll(() => cellsOnDisk(request, path)).toEqual(['x = 1']);
  });
});
