/** Stop the lab a test restarted (restartLab.ts): Playwright only stops the webServer it started itself. */
import { existsSync, readFileSync } from 'fs';

import { restartedPidFile } from './restartLab';

export default async function teardown(): Promise<void> {
  const file = restartedPidFile(process.env);
  if (!existsSync(file)) {
    return;
  }
  const pid = Number(readFileSync(file, 'utf-8'));
  try {
    process.kill(pid, 'SIGTERM');
  } catch {
    // already gone
  }
}
