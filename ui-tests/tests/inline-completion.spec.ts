/**
 * Inline completion in a notebook cell: typing shows ghost text from the scripted model (fill-in-the-middle
 * through `/v1/completions`), and Tab, JupyterLab's own key, accepts it.
 *
 * The test lab turns the hdsp-agent provider off (jupyter_server_test_config.py: other specs type in cells);
 * this spec turns it on as a user does, in the Inline Completer settings, and back off after.
 */
import { expect, test } from '@jupyterlab/galata';
import { APIRequestContext } from '@playwright/test';

import { failOnConsoleErrors, loadScript, modelRequests } from './helpers';

const INLINE_SETTINGS =
  '/lab/api/settings/@jupyterlab/completer-extension:inline-completer';

async function provider(
  request: APIRequestContext,
  on: boolean
): Promise<void> {
  // A long wait after the last key: the keys typed below never pause that long, so one request is made.
  const raw = on
    ? JSON.stringify({
        providers: { 'hdsp-agent': { enabled: true, debouncerDelay: 700 } }
      })
    : '{}';
  const response = await request.put(INLINE_SETTINGS, { data: { raw } });
  expect(response.ok()).toBeTruthy();
}

test.describe('inline completion', () => {
  failOnConsoleErrors();
  test.beforeAll(async ({ request }) => provider(request, true));
  test.afterAll(async ({ request }) => provider(request, false));

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

    // What the model read: fill-in-the-middle with the cell above before the cursor's line.
    const sent = (await modelRequests(request)).at(-1);
    expect(sent.messages).toBeUndefined();
    expect(sent.prompt).toContain('import math\n');
    expect(sent.prompt.endsWith('prices = [1, 2]\nmath.')).toBe(true);
    expect(sent.suffix).toBe('');
  });
});
