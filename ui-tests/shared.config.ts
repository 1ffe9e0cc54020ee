/**
 * What both Playwright configs (the lab's and the hub's) share: Debian's Chromium and the scripted model.
 */

/** Launch options for Debian's Chromium (Playwright cannot download its own browsers here). */
export function chromiumLaunchOptions(env: NodeJS.ProcessEnv) {
  return {
    executablePath: env.HDSP_UI_CHROMIUM ?? '/usr/bin/chromium',
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
      '--disable-dev-shm-usage'
    ]
  };
}

/** The model: tests load their replies with POST /script (tests/scripted_model.py). */
export function scriptedModelServer(env: NodeJS.ProcessEnv) {
  return {
    command: `python ../tests/scripted_model.py --port ${env.HDSP_UI_MODEL_PORT}`,
    url: `http://127.0.0.1:${env.HDSP_UI_MODEL_PORT}/v1/models`,
    timeout: 30_000,
    reuseExistingServer: false,
    stdout: 'pipe' as const,
    stderr: 'pipe' as const
  };
}
