/**
 * Skills in the browser: a project skill (.hdsp/skills/…/SKILL.md) is listed by `/skills` as waiting for
 * trust, trusted there, and then used on demand: the model's first request names it without its body, and
 * the body comes back as the use_skill result.
 */
import { expect, test } from '@jupyterlab/galata';
import { mkdirSync, rmSync, writeFileSync } from 'fs';
import { join } from 'path';

import {
  failOnConsoleErrors,
  loadScript,
  modelRequests,
  openPanel,
  sendInNewChat
} from './helpers';

const NAME = 'ui-clean-csv';
const BODY = 'Read the first 20 lines, then say the word PAPAYA-42.';

test.describe('skills', () => {
  failOnConsoleErrors();
  const folder = join(process.env.HDSP_UI_ROOT_DIR!, '.hdsp', 'skills', NAME);

  test.beforeAll(() => {
    // Written behind the agent's back, as a shell command could: it must wait for the user's trust.
    mkdirSync(folder, { recursive: true });
    writeFileSync(
      join(folder, 'SKILL.md'),
      `---\nname: ${NAME}\ndescription: Clean a messy CSV export.\n---\n${BODY}\n`
    );
  });
  test.afterAll(() => rmSync(folder, { recursive: true, force: true }));

  test('a project skill is listed, trusted, and its body read on demand, not sent up front', async ({
    page,
    request
  }) => {
    await loadScript(request, [
      { tool_calls: [['use_skill', JSON.stringify({ name: NAME })]] },
      { text: 'Cleaned.' }
    ]);
    const panel = await openPanel(page);
    const input = panel.getByRole('textbox', { name: 'Message' });
    await input.fill('/skills');
    await input.press('Enter');

    const skills = panel.getByRole('region', { name: 'Skills' });
    const item = skills.locator(`[data-skill="${NAME}"]`);
    await expect(item).toHaveAttribute('data-status', 'untrusted');
    await expect(item).toContainText('Clean a messy CSV export.');
    await expect(skills.locator('[data-skill="report"]')).toHaveAttribute(
      'data-status',
      'trusted'
    );
    await item.getByRole('button', { name: 'Trust this skill' }).click();
    await expect(item).toHaveAttribute('data-status', 'trusted');
    await skills.getByRole('button', { name: 'Close' }).click();
    await expect(skills).toHaveCount(0);

    await sendInNewChat(panel, 'clean data.csv');
    await expect(
      panel.locator('.jp-hdsp-Message-assistant').last()
    ).toContainText('Cleaned.');
    const [first, second] = await modelRequests(request);
    const system = first.messages[0].content as string;
    expect(system).toContain(`- ${NAME}: Clean a messy CSV export.`);
    expect(JSON.stringify(first)).not.toContain('PAPAYA-42');
    const result = second.messages.find((m: any) => m.role === 'tool');
    expect(result.content).toContain(BODY);
  });
});
