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

import {
  loadScript,
  modelRequests,
  PANEL_ID,
  screenshot,
  sendInNewChat
} from './helpers';

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
  let rootDir = '';
  const token = randomBytes(16).toString('hex');

  test.beforeAll(async () => {
    test.setTimeout(120_000);
    const port = await freePort();
    configDir = mkdtempSync(join(tmpdir(), 'hdsp-agent-ui-fresh-config-'));
    rootDir = mkdtempSync(join(tmpdir(), 'hdsp-agent-ui-fresh-root-'));
    const env = {
      ...process.env,
      HDSP_UI_NO_MODEL: '1',
      // A fresh lab: its own conversation store, not the run's (which holds the other specs' chats).
      HDSP_UI_STORE_DIR: mkdtempSync(
        join(tmpdir(), 'hdsp-agent-ui-fresh-store-')
      ),
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
        `--ServerApp.root_dir=${rootDir}`
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
      // The readiness check: a streamed answer, then a tool call it asks for (this model answers in prose).
      { text: '1 2 3 4 5 6', pieces: 6, delay: 0.02 },
      { text: 'I am ready.' },
      { text: 'Hello! How can I help?' }
    ]);
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
    const setup = panel.getByRole('region', { name: 'Model setup' });
    await expect(setup).toContainText('Connect a model');

    const endpoint = `http://127.0.0.1:${process.env.HDSP_UI_MODEL_PORT}/v1`;
    await setup.getByLabel('Endpoint URL').fill(endpoint);
    await setup.getByLabel('API key').fill('sk-typed-in-the-sidebar');
    await setup.getByRole('button', { name: 'List models' }).click();
    await expect(
      setup.getByRole('combobox', { name: 'Model', exact: true })
    ).toHaveValue('scripted');
    await expect(setup).toContainText('at most 300 tokens');
    await setup.getByRole('button', { name: 'Test' }).click();
    const card = setup.getByRole('status', { name: 'Readiness check' });
    await expect(card.locator('[data-check="streaming"]')).toContainText(
      'Streaming works'
    );
    await expect(card.locator('[data-check="tools"]')).toContainText(
      'cannot call tools natively'
    );
    await expect(card).toContainText(
      'Tool calls: described in the prompt (text mode)'
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

  test('in text mode a tool block written in prose runs through the approval card', async ({
    browser,
    request
  }, testInfo) => {
    const block =
      '<tool_call>\n{"name": "create_new_file", "arguments": {"filepath": "notes.txt", "contents": "hello\\n"}}\n</tool_call>';
    await loadScript(request, [
      { text: `I will write your notes.\n${block}`, pieces: 12 },
      { text: 'Your notes are in notes.txt.' }
    ]);
    const context = await browser.newContext({
      extraHTTPHeaders: { Authorization: `token ${token}` },
      viewport: { width: 1280, height: 800 }
    });
    const page = await context.newPage();
    await page.goto(`${baseURL}/lab?reset`);
    // The workspace may have kept the sidebar open from the previous test: a click would close it.
    const tab = page.locator(
      `.jp-SideBar.jp-mod-right .lm-TabBar-tab[data-id="${PANEL_ID}"]`
    );
    await tab.waitFor();
    await page.waitForTimeout(1000);
    if (!(await tab.evaluate(el => el.classList.contains('lm-mod-current')))) {
      await tab.click();
    }
    const panel = page.locator(`#${PANEL_ID}`);
    // The model saved by the previous test: switch it to text tool calls in "Manage models…".
    await panel
      .getByRole('combobox', { name: 'Model', exact: true })
      .selectOption({ label: 'Manage models…' });
    const setup = panel.getByRole('region', { name: 'Model setup' });
    await setup.getByLabel('Tool calls').selectOption('text');
    await setup.getByRole('button', { name: 'Save' }).click();

    await expect(panel.getByRole('textbox', { name: 'Message' })).toBeVisible();
    await sendInNewChat(panel, 'Write my notes to a file');

    const dialog = panel.getByRole('dialog', {
      name: 'Create the file notes.txt?'
    });
    await expect(dialog).toBeVisible();
    await expect(
      panel.locator('.jp-hdsp-ToolCard[data-status="awaiting_approval"]')
    ).toBeVisible();
    await screenshot(page, testInfo, 'text-mode-approval.png');
    await dialog.getByRole('button', { name: 'Allow once' }).click();
    await expect(panel.locator('.jp-hdsp-ToolCard').first()).toHaveAttribute(
      'data-status',
      'done'
    );
    await expect(
      panel.locator('.jp-hdsp-Message-assistant').last()
    ).toContainText('Your notes are in notes.txt.');
    // The prose is shown, the block is not.
    await expect(
      panel.locator('.jp-hdsp-Message-assistant').first()
    ).not.toContainText('<tool_call>');
    expect(readFileSync(join(rootDir, 'notes.txt'), 'utf-8')).toBe('hello\n');

    // The requests carried no tools: they were described in the system prompt.
    const [first, second] = await modelRequests(request);
    expect(first.tools).toBeUndefined();
    expect(first.messages[0].content).toContain('<tool_call>');
    expect(JSON.stringify(second.messages)).toContain('[tool result for call');
    await context.close();
  });
});
