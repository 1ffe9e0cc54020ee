/**
 * From install to first answer without editing a file: a fresh JupyterLab with no model configured (its own
 * server, its own empty Jupyter config dir), the scripted model server on 127.0.0.1 as the endpoint.
 */
import { expect, test } from '@jupyterlab/galata';
import { ChildProcess, spawn } from 'child_process';
import { randomBytes } from 'crypto';
import { existsSync, mkdtempSync, readFileSync, statSync } from 'fs';
import { createServer } from 'net';
import { tmpdir } from 'os';
import { join } from 'path';

import { loadScript, modelRequests, PANEL_ID, screenshot } from './helpers';

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

async function waitForServer(url: string, token: string): Promise<void> {
  const deadline = Date.now() + 90_000;
  while (Date.now() < deadline) {
    try {
      const response = await fetch(url, {
        headers: { Authorization: `token ${token}` }
      });
      if (response.ok) {
        return;
      }
    } catch {
      // not listening yet
    }
    await new Promise(resolve => setTimeout(resolve, 250));
  }
  throw new Error(`no server at ${url}`);
}

test.describe('model setup in the sidebar', () => {
  let lab: ChildProcess | null = null;
  let baseURL = '';
  let configDir = '';
  const token = randomBytes(16).toString('hex');

  test.beforeAll(async () => {
    test.setTimeout(120_000);
    const port = await freePort();
    configDir = mkdtempSync(join(tmpdir(), 'hdsp-agent-ui-fresh-config-'));
    const env = {
      ...process.env,
      HDSP_UI_NO_MODEL: '1',
      JUPYTER_CONFIG_DIR: configDir
    };
    // Nothing may configure the model for this lab but the user in the sidebar.
    delete env.OPENAI_BASE_URL;
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
        `--ServerApp.root_dir=${mkdtempSync(join(tmpdir(), 'hdsp-agent-ui-fresh-root-'))}`
      ],
      { env, stdio: 'ignore' }
    );
    baseURL = `http://127.0.0.1:${port}`;
    await waitForServer(`${baseURL}/api`, token);
  });

  test.afterAll(() => {
    lab?.kill('SIGTERM');
  });

  test('the user enters the endpoint, picks the model from its list and gets an answer, with no restart', async ({
    browser,
    request
  }, testInfo) => {
    await loadScript(request, [
      { text: 'OK' },
      { text: 'Hello! How can I help?' }
    ]);
    const context = await browser.newContext({
      extraHTTPHeaders: { Authorization: `token ${token}` },
      viewport: { width: 1280, height: 800 }
    });
    const page = await context.newPage();
    await page.goto(`${baseURL}/lab`);
    await page
      .locator(`.jp-SideBar.jp-mod-right .lm-TabBar-tab[data-id="${PANEL_ID}"]`)
      .click();
    const panel = page.locator(`#${PANEL_ID}`);
    const setup = panel.getByRole('region', { name: 'Model setup' });
    await expect(setup).toContainText('Connect a model');

    const endpoint = `http://127.0.0.1:${process.env.HDSP_UI_MODEL_PORT}/v1`;
    await setup.getByLabel('Endpoint URL').fill(endpoint);
    await setup.getByLabel('API key').fill('sk-typed-in-the-sidebar');
    await setup.getByRole('button', { name: 'List models' }).click();
    await expect(setup.getByLabel('Model')).toHaveValue('scripted');
    await setup.getByRole('button', { name: 'Test' }).click();
    await expect(setup.getByRole('status')).toContainText(
      'The model answered: OK'
    );
    await screenshot(page, testInfo, 'model-setup.png');
    await setup.getByRole('button', { name: 'Save' }).click();

    const input = panel.getByRole('textbox', { name: 'Message' });
    await expect(input).toBeVisible();
    await input.fill('hello');
    await input.press('Enter');
    await expect(
      panel.locator('.jp-hdsp-Message-assistant').last()
    ).toContainText('Hello! How can I help?');
    await screenshot(page, testInfo, 'first-answer.png');

    const requests = await modelRequests(request);
    expect(requests.at(-1).messages.at(-1)).toMatchObject({
      role: 'user',
      content: 'hello'
    });

    // Saved on the server, readable by the user alone; the key never went back to the page.
    const saved = join(configDir, 'hdsp_agent', 'model.json');
    expect(existsSync(saved)).toBeTruthy();
    expect(statSync(saved).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(saved, 'utf-8'))).toMatchObject({
      base_url: endpoint,
      model: 'scripted',
      api_key: 'sk-typed-in-the-sidebar'
    });
    expect(await page.content()).not.toContain('sk-typed-in-the-sidebar');
    await context.close();
  });
});
