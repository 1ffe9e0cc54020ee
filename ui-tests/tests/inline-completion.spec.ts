/**
 * Inline completion in a notebook cell and in the file editor: typing shows ghost text from the scripted
 * model (fill-in-the-middle through `/v1/completions`), and Tab, JupyterLab's own key, accepts it.
 *
 * The test lab turns the hdsp-agent provider off (jupyter_server_test_config.py: other specs type in cells);
 * this spec's page has it on, as a user sets it under Settings → Inline Completer.
 */
import { expect, galata, test } from '@jupyterlab/galata';

import {
  failOnConsoleErrors,
  loadScript,
  modelRequests,
  openWith
} from './helpers';

test.use({
  mockSettings: {
    ...galata.DEFAULT_SETTINGS,
    // A long wait after the last key: the keys typed below never pause that long, so one request is made.
    '@jupyterlab/completer-extension:inline-completer': {
      providers: { 'hdsp-agent': { enabled: true, debouncerDelay: 700 } }
    }
  }
});

test.describe('inline completion', () => {
  failOnConsoleErrors();

  test("typing in a cell shows the model's ghost text and Tab accepts it", async ({
    page,
    request
  }) => {
    // More than one reply: a slow machine may pause long enough mid-typing for an early request.
    await loadScript(request, Array(4).fill({ text: 'mean()' }), {
      completions: true
    });
    await page.notebook.createNew('complete.ipynb');
    await page.notebook.setCell(0, 'code', 'import math');
    await page.notebook.addCell('code', '');
    await page.notebook.enterCellEditingMode(1);
    await page.keyboard.type('prices = [1, 2]\nmath.', { delay: 20 });

    const ghost = page.locator('.jp-GhostText');
    await expect(ghost).toHaveText('mean()');
    await page.keyboard.press('Tab');
    await expect(ghost).toHaveCount(0);
    expect(await page.notebook.getCellTextInput(1)).toBe(
      'prices = [1, 2]\nmath.mean()'
    );

    // What the model read: fill-in-the-middle, the cell above before the cursor's cell. (Accepting changes
    // the text: a later request may follow.)
    const sent = (await modelRequests(request)).find(
      (body: any) =>
        typeof body.prompt === 'string' &&
        body.prompt.endsWith('prices = [1, 2]\nmath.')
    );
    expect(sent).toBeDefined();
    expect(sent.messages).toBeUndefined();
    expect(sent.prompt).toContain('import math\n');
    expect(sent.suffix).toBe('');
  });

  test('typing in a Python file in the editor shows ghost text with the text after the cursor as the suffix', async ({
    page,
    request,
    tmpPath
  }) => {
    await loadScript(request, Array(4).fill({ text: 'sqrt(2)' }), {
      completions: true
    });
    const path = `${tmpPath}/calc.py`;
    const put = await request.put(`/api/contents/${path}`, {
      data: {
        type: 'file',
        format: 'text',
        content: 'import math\n\n\nprint(root)\n'
      }
    });
    expect(put.ok()).toBeTruthy();
    await openWith(page, path, 'Editor');
    const editor = page.locator('.jp-FileEditor:visible .cm-content');
    await expect(editor).toContainText('print(root)');
    // The cursor on the empty line between the import and the print.
    await editor.locator('.cm-line').nth(2).click();
    await page.keyboard.type('root = math.', { delay: 20 });

    const ghost = page.locator('.jp-GhostText');
    await expect(ghost).toHaveText('sqrt(2)');
    await page.keyboard.press('Tab');
    await expect(ghost).toHaveCount(0);
    await expect(editor.locator('.cm-line').nth(2)).toHaveText(
      'root = math.sqrt(2)'
    );

    const sent = (await modelRequests(request)).find(
      (body: any) =>
        typeof body.prompt === 'string' && body.prompt.endsWith('root = math.')
    );
    expect(sent).toBeDefined();
    expect(sent.prompt).toContain('import math\n');
    expect(sent.suffix).toContain('print(root)');
  });
});
