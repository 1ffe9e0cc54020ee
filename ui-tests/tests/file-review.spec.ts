import { expect, test } from '@jupyterlab/galata';
import { APIRequestContext } from '@playwright/test';

import {
  failOnConsoleErrors,
  loadScript,
  openPanel,
  screenshot,
  sendInNewChat
} from './helpers';

const ORIGINAL = Array.from(
  { length: 16 },
  (_, n) => `line_${n + 1} = ${n + 1}`
)
  .join('\n')
  .concat('\n');

async function fileOnDisk(
  request: APIRequestContext,
  path: string
): Promise<string> {
  const reply = await request.get(`/api/contents/${path}?content=1&type=file`);
  return (await reply.json()).content;
}

test.describe('reviewing the agent’s file edits in the editor', () => {
  // The refused undo is a 409 the browser logs as a failed resource.
  failOnConsoleErrors([/status of 409 \(Conflict\)/]);

  test('each hunk is shown inline with Keep / Undo; Undo restores that hunk only, and refuses one the user edited', async ({
    page,
    request,
    tmpPath
  }, testInfo) => {
    const path = `${tmpPath}/notes.py`;
    await request.put(`/api/contents/${path}`, {
      data: { type: 'file', format: 'text', content: ORIGINAL }
    });
    await page.evaluate(async p => {
      await (window as any).jupyterapp.commands.execute('docmanager:open', {
        path: p
      });
    }, path);
    const editor = page.locator('.jp-FileEditor:visible');
    await expect(editor.locator('.cm-content')).toContainText('line_16 = 16');

    const edit = (old: string, replacement: string) =>
      [
        'single_find_and_replace',
        JSON.stringify({
          filepath: path,
          old_string: old,
          new_string: replacement
        })
      ] as [string, string];
    await loadScript(request, [
      {
        tool_calls: [
          edit('line_2 = 2', 'line_2 = 200'),
          edit('line_8 = 8\n', 'line_8 = 800\nextra = 0\n'),
          edit('line_14 = 14', 'line_14 = 1400')
        ]
      },
      { text: 'Changed three places.' }
    ]);
    const panel = await openPanel(page);
    await panel
      .getByRole('combobox', { name: 'Mode', exact: true })
      .selectOption({ label: 'Accept edits' });
    await sendInNewChat(panel, 'Change lines 2, 8 and 14');
    await expect(
      panel.locator('.jp-hdsp-Message-assistant').last()
    ).toContainText('Changed three places.', { timeout: 60_000 });

    // Three hunks, each with its removed line struck through above the agent's lines.
    const bars = editor.locator('.jp-hdsp-HunkBar');
    await expect(bars).toHaveCount(3);
    await expect(editor.locator('.jp-hdsp-HunkLine')).toHaveCount(4);
    await expect(bars.nth(0).locator('.jp-hdsp-HunkBar-removed')).toHaveText(
      'line_2 = 2'
    );
    await expect(bars.nth(1)).toContainText('agent');
    const review = panel.getByRole('region', { name: 'Review' });
    await expect(review).toContainText('1 file');
    // The review bar is one line until opened; opened, it lists the file as a button that opens it.
    await review.getByRole('button', { name: /^Changed:/ }).click();
    await expect(review.getByRole('button', { name: path })).toBeVisible();
    await screenshot(page, testInfo, 'file-review-hunks.png');

    // Undo the second hunk: lines 8 comes back, "extra" goes; the other two changes stay, on disk too.
    await bars.nth(1).getByRole('button', { name: 'Undo' }).click();
    await expect(bars).toHaveCount(2);
    await expect(editor.locator('.cm-content')).not.toContainText('extra = 0');
    await expect(editor.locator('.cm-content')).toContainText('line_8 = 8');
    const afterUndo = ORIGINAL.replace(
      'line_2 = 2\n',
      'line_2 = 200\n'
    ).replace('line_14 = 14\n', 'line_14 = 1400\n');
    await expect.poll(() => fileOnDisk(request, path)).toBe(afterUndo);

    // Another program changes the agent's line 14 on disk (the editor does not know yet), then the user asks
    // to undo that hunk: the server refuses, and the other program's words stay.
    const mine = afterUndo.replace(
      'line_14 = 1400\n',
      'line_14 = 1400  # mine\n'
    );
    await request.put(`/api/contents/${path}`, {
      data: { type: 'file', format: 'text', content: mine }
    });
    await bars.nth(1).getByRole('button', { name: 'Undo' }).click();
    await expect(page.locator('.Toastify')).toContainText(
      'This change was not undone'
    );
    await expect(page.locator('.Toastify')).toContainText('edited since');
    expect(await fileOnDisk(request, path)).toBe(mine);
    await expect(bars).toHaveCount(1); // the edited hunk is not offered for a one-click undo again
    await screenshot(page, testInfo, 'file-review-refused.png');

    // Keep the first: its bar goes and, nothing left to review, the file leaves the review bar.
    await bars.nth(0).getByRole('button', { name: 'Keep' }).click();
    await expect(bars).toHaveCount(0);
    await expect(editor.locator('.cm-content')).toContainText('line_2 = 200');
    await expect(review).toHaveCount(0);
  });
});
