/**
 * Browser tests of hdsp-agent: a real JupyterLab (the `jupyter` on PATH, so run them inside the venv
 * where hdsp-agent is installed) driven by Playwright in Debian's Chromium.
 *
 * Environment:
 *   HDSP_UI_PORT        port of the JupyterLab started for the tests (default 18765)
 *   HDSP_UI_MODEL_PORT  port of the scripted model server the lab talks to (default 18766)
 *   HDSP_UI_CHROMIUM    browser binary (default /usr/bin/chromium)
 */
import { randomBytes } from 'crypto';
import { mkdtempSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';

import { defineConfig } from '@playwright/test';

import { labArguments } from './restartLab';
import { chromiumLaunchOptions, scriptedModelServer } from './shared.config';

const baseConfig = require('@jupyterlab/galata/lib/playwright-config');

// The config is evaluated by the runner and again by each worker: the runner picks the values and
// the workers inherit them through the environment.
const env = process.env;
env.HDSP_UI_PORT ??= '18765';
env.HDSP_UI_MODEL_PORT ??= '18766';
env.HDSP_UI_TOKEN ??= randomBytes(16).toString('hex');
env.HDSP_UI_ROOT_DIR ??= mkdtempSync(join(tmpdir(), 'hdsp-agent-ui-root-'));
// The conversation store: one for the run, so a lab restarted by a test (restart.spec.ts) finds its history.
env.HDSP_UI_STORE_DIR ??= mkdtempSync(join(tmpdir(), 'hdsp-agent-ui-store-'));
// The user's Jupyter config dir of the lab (its skills, the skills and project files it trusts): a fresh one,
// so a test's "Trust" never lands in the developer's own ~/.jupyter and their skills never reach a test.
env.HDSP_UI_CONFIG_DIR ??= mkdtempSync(join(tmpdir(), 'hdsp-agent-ui-config-'));
env.JUPYTER_CONFIG_DIR = env.HDSP_UI_CONFIG_DIR;

const baseURL = `http://127.0.0.1:${env.HDSP_UI_PORT}`;

export default defineConfig({
  ...baseConfig,
  testDir: './tests',
  outputDir: './test-results',
  reporter: [['list'], ['html', { open: 'never' }]],
  retries: 0,
  // A lab a test restarted (restartLab) is not the webServer's process: stopped here.
  globalTeardown: './restartLab.teardown.ts',
  workers: 1,
  timeout: 90_000,
  expect: { timeout: 15_000 },
  use: {
    ...baseConfig.use,
    baseURL,
    // Every page and API request of the test carries the server token.
    extraHTTPHeaders: { Authorization: `token ${env.HDSP_UI_TOKEN}` },
    trace: 'retain-on-failure',
    video: 'off',
    launchOptions: chromiumLaunchOptions(env)
  },
  webServer: [
    scriptedModelServer(env),
    {
      command: ['jupyter', ...labArguments(env)].join(' '),
      url: `${baseURL}/api`,
      timeout: 120_000,
      reuseExistingServer: false,
      stdout: 'pipe',
      stderr: 'pipe'
    }
  ]
});
