import { expect, test } from '@jupyterlab/galata';

import {
  failOnConsoleErrors,
  loadScript,
  modelRequests,
  openPanel,
  releaseModel,
  sendInNewChat
} from './helpers';

/**
 * What the sidebar says is true: a cell that raised is not "Done", the agent waiting for the user
 * is not "Working…", and a message sent while the agent works is queued, not dropped.
 */
test.describe('hdsp-agent honest status', () => {
  failOnConsoleErrors();

  test('a cell that raised shows as an error, and an approval shows as waiting for you', async ({
    page,
    request
  }) => {
    await loadScript(request, [
      { tool_calls: [['run_cell', '{"code": "1 / 0"}']] },
      { text: 'The cell failed.' }
    ]);
    await page.notebook.createNew('errors.ipynb');
    const panel = await openPanel(page);
    await sendInNewChat(panel, 'Divide by zero in my notebook');

    const dialog = panel.locator('.jp-hdsp-ApprovalCard');
    await expect(dialog).toBeVisible();
    const status = panel.locator('.jp-hdsp-Working');
    await expect(status).toHaveText('Waiting for you: allow or deny below');
    await expect(status.locator('.jp-hdsp-Spinner')).toHaveCount(0);
    const card = panel.locator('.jp-hdsp-ToolCard').first();
    await expect(card.locator('.jp-hdsp-ToolCard-status')).toHaveText(
      'Waiting for you'
    );

    await dialog.getByRole('button', { name: 'Allow once' }).click();

    await expect(card).toHaveAttribute('data-status', 'done', {
      timeout: 60_000
    });
    await expect(card).toHaveAttribute('data-outcome', 'error');
    await expect(card.locator('.jp-hdsp-ToolCard-status')).toHaveText(
      'Raised an error'
    );
    await expect(
      panel.locator('.jp-hdsp-Message-assistant').last()
    ).toContainText('The cell failed.');
  });

  test('a message sent while the agent works is queued, shown, and sent when the turn ends', async ({
    page,
    request
  }) => {
    await loadScript(request, [
      {
        text: 'A long answer that streams for a while. '.repeat(4),
        pieces: 20,
        hold_after: 2
      },
      { text: 'Second answer.' }
    ]);
    const panel = await openPanel(page);
    await sendInNewChat(panel, 'First question');
    const answer = panel.locator('.jp-hdsp-Message-assistant').first();
    await expect(answer).toHaveAttribute('data-complete', 'false');

    const input = panel.getByRole('textbox', { name: 'Message' });
    await input.fill('Follow-up question');
    await input.press('Enter');

    await expect(input).toHaveValue('');
    const queued = panel.locator('.jp-hdsp-Composer-queued');
    await expect(queued).toContainText('Queued, sent when the agent finishes:');
    await expect(queued).toContainText('Follow-up question');
    await releaseModel(request);

    // When the first turn ends, the queued message goes as the next turn.
    await expect(panel.locator('.jp-hdsp-Message-user')).toHaveCount(2, {
      timeout: 30_000
    });
    await expect(panel.locator('.jp-hdsp-Message-user').last()).toContainText(
      'Follow-up question'
    );
    await expect(queued).toHaveCount(0);
    await expect(
      panel.locator('.jp-hdsp-Message-assistant').last()
    ).toContainText('Second answer.');
    const requests = await modelRequests(request);
    expect(requests.at(-1).messages.at(-1)).toMatchObject({
      role: 'user',
      content: 'Follow-up question'
    });
  });
});
