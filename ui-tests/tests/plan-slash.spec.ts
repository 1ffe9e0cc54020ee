/**
 * Plan mode and slash commands in the browser: `/plan` on a task produces a plan and nothing is written
 * until "Approve plan", then the plan runs; `/context` shows a breakdown that sums to the size of the
 * request the model then receives; `/` completes the commands.
 */
import { expect, test } from '@jupyterlab/galata';

import {
  failOnConsoleErrors,
  loadScript,
  modelRequests,
  openPanel
} from './helpers';

// The server's estimate (hdsp_agent/agent/context_budget.py): characters of Python's json.dumps / 3.
const CHARS_PER_TOKEN = 3;

/** Python's `json.dumps(value, ensure_ascii=False)`: `, ` and `: ` between items (ASCII test data). */
function pyDumps(value: unknown): string {
  if (Array.isArray(value)) {
    return `[${value.map(pyDumps).join(', ')}]`;
  }
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>);
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}: ${pyDumps(item)}`).join(', ')}}`;
  }
  return JSON.stringify(value);
}

test.describe('plan mode and slash commands', () => {
  failOnConsoleErrors();

  test('/ completes the commands; /plan writes nothing until "Approve plan", then the plan runs', async ({
    page,
    request,
    tmpPath
  }) => {
    const target = `${tmpPath}/summary.txt`;
    const write: [string, string][] = [
      [
        'create_new_file',
        JSON.stringify({ filepath: target, contents: 'one row' })
      ]
    ];
    await loadScript(request, [
      { tool_calls: write }, // in plan mode: refused by the policy
      { text: 'The plan:\n\n- [ ] Count the rows\n- [ ] Write summary.txt' },
      { tool_calls: write }, // after "Approve plan", in accept-edits
      { text: 'Done.' }
    ]);
    const panel = await openPanel(page);
    await panel.getByRole('button', { name: 'New chat' }).click();
    const input = panel.getByRole('textbox', { name: 'Message' });

    await input.pressSequentially('/');
    const options = panel
      .getByRole('listbox', { name: 'Commands' })
      .getByRole('option');
    for (const name of [
      '/new',
      '/compact',
      '/context',
      '/plan',
      '/undo',
      '/model',
      '/mode'
    ]) {
      // `/mode` is not `/model`: the name, then no more letters.
      const exact = new RegExp(`^${name}(?![a-z])`);
      await expect(options.filter({ hasText: exact })).toHaveCount(1);
    }
    await input.pressSequentially('pl');
    await expect(options).toHaveCount(1);
    await input.press('Tab');
    await expect(input).toHaveValue('/plan ');
    await input.pressSequentially('summarize the data');
    await input.press('Enter');

    const card = panel.getByRole('group', { name: 'Plan' });
    await expect(card).toContainText('Count the rows');
    await expect(card).toContainText('.hdsp/plans/');
    const denied = await modelRequests(request);
    expect(JSON.stringify(denied[1].messages)).toContain('plan mode');
    expect((await request.get(`/api/contents/${target}`)).status()).toBe(404);

    await card.getByRole('button', { name: 'Approve plan' }).click();
    await expect(
      panel.locator('.jp-hdsp-Message-assistant').last()
    ).toContainText('Done.');
    const written = await request.get(`/api/contents/${target}`);
    expect(written.status()).toBe(200);
    expect((await written.json()).content).toBe('one row');
    const sent = await modelRequests(request);
    expect(sent[2].messages.at(-1).content).toContain('Write summary.txt');
  });

  test('/context shows a breakdown that sums to the size of the next request', async ({
    page,
    request
  }) => {
    await loadScript(request, [{ text: 'Hello.' }, { text: 'Again.' }]);
    const panel = await openPanel(page);
    await panel.getByRole('button', { name: 'New chat' }).click();
    const input = panel.getByRole('textbox', { name: 'Message' });
    await input.fill('hi');
    await input.press('Enter');
    await expect(
      panel.locator('.jp-hdsp-Message-assistant').last()
    ).toContainText('Hello.');

    await input.fill('/context');
    await input.press('Enter');
    const report = panel.getByRole('region', { name: 'Context' });
    const cell = (part: string) =>
      report.locator(`tr[data-part="${part}"] td`).innerText();
    await expect(report).toBeVisible();
    const parts = await Promise.all(
      ['system', 'rules', 'tools', 'history', 'tool_results'].map(cell)
    );
    const total = Number(await cell('total'));
    expect(parts.map(Number).reduce((a, b) => a + b, 0)).toBe(total);

    // The next request is what /context counted plus the message sent now.
    await input.fill('next');
    await input.press('Enter');
    await expect(
      panel.locator('.jp-hdsp-Message-assistant').last()
    ).toContainText('Again.');
    const sent = (await modelRequests(request)).at(-1);
    const counted = [sent.messages.slice(0, -1), sent.tools ?? []];
    // Exact on the server (tests/test_plan_mode.py); here JSON re-serialized in JavaScript writes a
    // schema's 30.0 as 30, so the estimate may differ by a token.
    const estimate = Math.floor(pyDumps(counted).length / CHARS_PER_TOKEN) + 1;
    expect(Math.abs(estimate - total)).toBeLessThanOrEqual(1);
  });
});
