import { expect, test } from '@jupyterlab/galata';
import { Locator } from '@playwright/test';

import {
  contrast,
  failOnConsoleErrors,
  loadScript,
  openPanel,
  sendInNewChat
} from './helpers';

test.describe('hdsp-agent words and diffs', () => {
  failOnConsoleErrors();

  test('the approval asks in words, and its diff reads at 300 px in the dark theme', async ({
    page,
    request
  }) => {
    const longLine =
      'threshold = compute_the_threshold_for_the_experiment(data, columns=["alpha", "beta", "gamma"], factor=0.5)';
    const created = await request.put('/api/contents/utils.py', {
      data: { type: 'file', format: 'text', content: `${longLine}\n` }
    });
    expect(created.ok()).toBeTruthy();
    await loadScript(request, [
      {
        tool_calls: [
          [
            'single_find_and_replace',
            JSON.stringify({
              filepath: 'utils.py',
              old_string: 'factor=0.5',
              new_string: 'factor=0.8'
            })
          ]
        ]
      },
      { text: 'Changed.' }
    ]);
    await page.theme.setDarkTheme();
    const panel = await openPanel(page);
    await page.sidebar.setWidth(300, 'right');
    await sendInNewChat(panel, 'Use a factor of 0.8');

    const dialog = panel.getByRole('dialog', {
      name: 'Change the file utils.py?'
    });
    await expect(dialog).toBeVisible();
    const diff = dialog.locator('.jp-hdsp-Diff');
    await expect(diff.locator('.jp-hdsp-Diff-add')).toContainText('factor=0.8');

    // Narrow: the whole line shows, wrapped, without scrolling sideways.
    const width = await panel.evaluate(
      node => node.getBoundingClientRect().width
    );
    expect(width).toBeLessThanOrEqual(310);
    const overflow = await diff.evaluate(
      node => node.scrollWidth - node.clientWidth
    );
    expect(overflow).toBeLessThanOrEqual(1);

    // The changed token is marked, and every line is readable in the dark theme.
    await expect(
      diff.locator('.jp-hdsp-Diff-add .jp-hdsp-Diff-changed')
    ).toHaveText('8');
    await expect(
      diff.locator('.jp-hdsp-Diff-remove .jp-hdsp-Diff-changed')
    ).toHaveText('5');
    for (const line of [
      diff.locator('.jp-hdsp-Diff-add'),
      diff.locator('.jp-hdsp-Diff-remove'),
      diff.locator('.jp-hdsp-Diff-hunk'),
      diff.locator('.jp-hdsp-Diff-add .jp-hdsp-Diff-changed')
    ]) {
      expect(await contrast(line.first())).toBeGreaterThanOrEqual(4.5);
    }

    await dialog.getByRole('button', { name: 'Allow once' }).click();
    const card = panel.locator('.jp-hdsp-ToolCard').first();
    await expect(card).toHaveAttribute('data-status', 'done');
    await expect(card.locator('.jp-hdsp-ToolCard-headline')).toHaveText(
      'Change utils.py'
    );
    await page.theme.setLightTheme();
  });
});
