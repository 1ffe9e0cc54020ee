/**
 * Restart the JupyterLab the tests run against, as a user stopping and starting `jupyter lab` does: SIGTERM to
 * the process serving $HDSP_UI_PORT, then the same command again (same port, root, token and conversation
 * store: $HDSP_UI_STORE_DIR). The new process is not Playwright's webServer: its pid goes to a file that the
 * global teardown (restartLab.teardown.ts) reads to stop it.
 */
import { execFileSync, spawn } from 'child_process';
import { openSync, writeFileSync } from 'fs';
import { join } from 'path';

export function labArguments(env: NodeJS.ProcessEnv): string[] {
  return [
    'lab',
    '--config=jupyter_server_test_config.py',
    '--no-browser',
    '--allow-root',
    '--ServerApp.ip=127.0.0.1',
    `--ServerApp.port=${env.HDSP_UI_PORT}`,
    '--ServerApp.port_retries=0',
    `--IdentityProvider.token=${env.HDSP_UI_TOKEN}`,
    `--ServerApp.root_dir=${env.HDSP_UI_ROOT_DIR}`
  ];
}

export function restartedPidFile(env: NodeJS.ProcessEnv): string {
  return join(env.HDSP_UI_STORE_DIR ?? '/tmp', 'restarted-lab.pid');
}

function listeningPid(port: string): number | null {
  const out = execFileSync('ss', ['-ltnpH', `sport = :${port}`]).toString();
  const found = /pid=(\d+)/.exec(out);
  return found ? Number(found[1]) : null;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function until(
  check: () => Promise<boolean> | boolean,
  what: string,
  ms = 120_000
): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting: ${what}`);
    }
    await new Promise(resolve => setTimeout(resolve, 200));
  }
}

export async function restartLab(): Promise<void> {
  const env = process.env;
  const port = env.HDSP_UI_PORT!;
  const pid = listeningPid(port);
  if (pid === null) {
    throw new Error(`no server listens on port ${port}`);
  }
  process.kill(pid, 'SIGTERM');
  await until(() => !alive(pid), `the lab (pid ${pid}) to stop`, 60_000);
  const log = openSync(
    join(env.HDSP_UI_STORE_DIR ?? '/tmp', 'restarted-lab.log'),
    'a'
  );
  const child = spawn('jupyter', labArguments(env), {
    cwd: __dirname,
    env,
    detached: true,
    stdio: ['ignore', log, log]
  });
  child.unref();
  writeFileSync(restartedPidFile(env), String(child.pid));
  await until(async () => {
    try {
      const response = await fetch(`http://127.0.0.1:${port}/api`);
      return response.ok;
    } catch {
      return false;
    }
  }, 'the restarted lab to answer');
}
