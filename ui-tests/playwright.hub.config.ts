/**
 * The sidebar through a real JupyterHub (ui-tests/hub/*.spec.ts): the hub, its proxy and alice's and bob's
 * single-user servers come from tests/hub_process.py, the model from tests/scripted_model.py. Run after the
 * main config (`make test-ui` runs both), so it reuses its ports:
 *   HDSP_UI_PORT        the hub's public port (default 18765)
 *   HDSP_UI_MODEL_PORT  the scripted model (default 18766)
 *   HDSP_UI_CHROMIUM    browser binary (default /usr/bin/chromium)
 */
import { defineConfig } from '@playwright/test';

import { chromiumLaunchOptions, scriptedModelServer } from './shared.config';

const env = process.env;
env.HDSP_UI_PORT ??= '18765';
env.HDSP_UI_MODEL_PORT ??= '18766';

export default defineConfig({
  testDir: './hub',
  outputDir: './test-results-hub',
  reporter: [['list']],
  retries: 0,
  workers: 1,
  timeout: 120_000,
  expect: { timeout: 20_000 },
  use: {
    baseURL: `http://127.0.0.1:${env.HDSP_UI_PORT}`,
    trace: 'retain-on-failure',
    video: 'off',
    launchOptions: chromiumLaunchOptions(env)
  },
  webServer: [
    scriptedModelServer(env),
    {
      // Ready once both users' servers answer through the proxy; SIGTERM lets it stop them and the proxy.
      command: [
        'python ../tests/hub_process.py',
        `--port ${env.HDSP_UI_PORT}`,
        `--model-url http://127.0.0.1:${env.HDSP_UI_MODEL_PORT}/v1`,
        '--notebook hub.ipynb'
      ].join(' '),
      wait: { stdout: /hub ready/ },
      timeout: 180_000,
      reuseExistingServer: false,
      gracefulShutdown: { signal: 'SIGTERM', timeout: 30_000 },
      stdout: 'pipe',
      stderr: 'pipe'
    }
  ]
});
