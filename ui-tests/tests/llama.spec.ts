/**
 * The sidebar with a real local model server: llama.cpp's llama-server serving SmolLM2-135M-Instruct (built once
 * per machine by `make llama-server`, scripts/build_llama_server.py). A fresh JupyterLab whose only model setting
 * is the endpoint (OPENAI_BASE_URL): the model comes from the server's own list. Skipped where llama-server is
 * not built, except under CI.
 */
import { expect, test } from '@jupyterlab/galata';
import { ChildProcess, execFileSync, spawn } from 'child_process';
import { randomBytes } from 'crypto';
import { mkdtempSync, openSync } from 'fs';
import { createServer } from 'net';
import { tmpdir } from 'os';
import { join } from 'path';

import { PANEL_ID, screenshot } from './helpers';

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address
          ? resolve(address.port)
          : reject()
      );
    });
  });
}

async function waitFor(url: string, headers: Record<string, string> = {}) {
  const deadline = Date.now() + 90_000;
  while (Date.now() < deadline) {
    try {
      if ((await fetch(url, { headers })).ok) {
        return;
      }
    } catch {
      // not listening yet
    }
    await new Promise(resolve => setTimeout(resolve, 250));
  }
  throw new Error(`no server at ${url}`);
}

/** The built llama-server and the GGUF, or null when this machine has not built them. */
function llamaPaths(): [string, string] | null {
  try {
    const out = execFileSync(
      'python',
      [
        join(__dirname, '..', '..', 'scripts', 'build_llama_server.py'),
        '--check'
      ],
      { encoding: 'utf-8' }
    );
    const [binary, model] = out.trim().split('\n');
    return [binary, model];
  } catch {
    return null;
  }
}

test.describe('a real llama-server in the sidebar', () => {
  let llama: ChildProcess | null = null;
  let lab: ChildProcess | null = null;
  let baseURL = '';
  let llamaUrl = '';
  const token = randomBytes(16).toString('hex');

  test.beforeAll(async () => {
    test.setTimeout(180_000);
    const paths = llamaPaths();
    if (paths === null) {
      expect(
        process.env.CI,
        'llama-server is not built: run make llama-server'
      ).toBeFalsy();
      test.skip(true, 'llama-server is not built: run make llama-server');
      return;
    }
    const llamaPort = await freePort();
    llama = spawn(
      paths[0],
      [
        ...['-m', paths[1], '-c', '8192', '--jinja', '--host', '127.0.0.1'],
        ...['--port', String(llamaPort), '-np', '1', '-t', '2', '--no-webui'],
        // Short, repeatable answers (as tests/llama_server.py starts it).
        ...['-n', '64', '--temp', '0', '--seed', '1']
      ],
      { stdio: 'ignore' }
    );
    await waitFor(`http://127.0.0.1:${llamaPort}/health`);
    llamaUrl = `http://127.0.0.1:${llamaPort}/v1`;
    const port = await freePort();
    // The lab's log, for when this test fails.
    const labLog = join(tmpdir(), `hdsp-agent-ui-llama-lab-${port}.log`);
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      HDSP_UI_NO_MODEL: '1',
      // A fresh lab: its own conversation store, not the run's (which holds the other specs' chats).
      HDSP_UI_STORE_DIR: mkdtempSync(
        join(tmpdir(), 'hdsp-agent-ui-fresh-store-')
      ),
      JUPYTER_CONFIG_DIR: mkdtempSync(join(tmpdir(), 'hdsp-agent-ui-llama-')),
      OPENAI_BASE_URL: llamaUrl
    };
    delete env.OPENAI_API_KEY;
    lab = spawn(
      'jupyter',
      [
        'lab',
        '--config=jupyter_server_test_config.py',
        '--no-browser',
        '--allow-root',
        '--ServerApp.ip=127.0.0.1',
        `--ServerApp.port=${port}`,
        '--ServerApp.port_retries=0',
        `--IdentityProvider.token=${token}`,
        `--ServerApp.root_dir=${mkdtempSync(join(tmpdir(), 'hdsp-agent-ui-llama-root-'))}`
      ],
      { env, stdio: ['ignore', 'ignore', openSync(labLog, 'w')] }
    );
    baseURL = `http://127.0.0.1:${port}`;
    await waitFor(`${baseURL}/api`, { Authorization: `token ${token}` });
  });

  test.afterAll(() => {
    lab?.kill('SIGTERM');
    llama?.kill('SIGKILL');
  });

  test('an answer streams in, and Test reports the window and no native tool calls', async ({
    browser
  }, testInfo) => {
    test.setTimeout(180_000);
    const context = await browser.newContext({
      extraHTTPHeaders: { Authorization: `token ${token}` },
      viewport: { width: 1280, height: 800 }
    });
    const page = await context.newPage();
    await page.goto(`${baseURL}/lab?reset`);
    await page
      .locator(`.jp-SideBar.jp-mod-right .lm-TabBar-tab[data-id="${PANEL_ID}"]`)
      .click();
    const panel = page.locator(`#${PANEL_ID}`);
    const input = panel.getByRole('textbox', { name: 'Message' });
    await expect(input).toBeVisible({ timeout: 30_000 });
    // Streamed: the page sees the answer at several lengths while it is written (recorded in the page).
    await page.evaluate(() => {
      const seen = new Set<number>();
      (window as any).answerLengths = seen;
      new MutationObserver(() => {
        const answers = document.querySelectorAll('.jp-hdsp-Message-assistant');
        const last = answers[answers.length - 1];
        if (last?.textContent?.trim()) {
          seen.add(last.textContent.length);
        }
      }).observe(document.body, {
        childList: true,
        subtree: true,
        characterData: true
      });
    });
    await input.fill('Tell me a short story about a cat.');
    await input.press('Enter');
    await expect
      .poll(
        () => page.evaluate(() => (window as any).answerLengths.size as number),
        { timeout: 90_000 }
      )
      .toBeGreaterThanOrEqual(2);
    // In text mode SmolLM2 may go on to write a tool block (then an approval waits): stop the turn here.
    const stop = panel.getByRole('button', { name: 'Stop' });
    if (await stop.isVisible()) {
      await stop.click();
    }
    await expect(panel.getByRole('button', { name: 'Send' })).toBeVisible({
      timeout: 60_000
    });
    await screenshot(page, testInfo, 'llama-answer.png');

    await panel
      .getByRole('combobox', { name: 'Model', exact: true })
      .selectOption({ label: 'Manage models…' });
    const setup = panel.getByRole('region', { name: 'Model setup' });
    await setup.getByLabel('Endpoint URL').fill(llamaUrl);
    await setup.getByRole('button', { name: 'List models' }).click();
    await expect(
      setup.getByRole('combobox', { name: 'Model', exact: true })
    ).toHaveValue(/SmolLM2/);
    await setup.getByRole('button', { name: 'Test' }).click();
    const card = setup.getByRole('status', { name: 'Readiness check' });
    await expect(card.locator('[data-check="streaming"]')).toContainText(
      'Streaming works',
      { timeout: 60_000 }
    );
    await expect(card.locator('[data-check="window"]')).toContainText(
      '8,192 tokens, as the server reports'
    );
    await expect(card.locator('[data-check="tools"]')).toContainText(
      'cannot call tools natively'
    );
    await expect(card).toContainText(
      'Tool calls: described in the prompt (text mode)'
    );
    await screenshot(page, testInfo, 'llama-readiness.png');
    await context.close();
  });
});
