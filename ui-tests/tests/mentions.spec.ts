import { expect, test } from '@jupyterlab/galata';

import {
  failOnConsoleErrors,
  loadScript,
  modelRequests,
  openPanel
} from './helpers';

test.describe('@ mentions', () => {
  failOnConsoleErrors();

  test('@ completes a kernel variable and a file; they go with the message', async ({
    page,
    request,
    tmpPath
  }) => {
    await loadScript(request, [{ text: 'Looked at them.' }]);
    await request.put(`/api/contents/${tmpPath}/sales_2026.csv`, {
      data: { type: 'file', format: 'text', content: 'region,total\n' }
    });
    await page.notebook.createNew('mentions.ipynb');
    await page.notebook.setCell(0, 'code', 'sales_by_region = {"north": 3}');
    await page.notebook.runCell(0, true);
    const panel = await openPanel(page);
    await panel.getByRole('button', { name: 'New chat' }).click();

    const input = panel.getByRole('textbox', { name: 'Message' });
    await input.pressSequentially('compare @sales_by');
    const options = panel
      .getByRole('listbox', { name: 'Mention' })
      .getByRole('option');
    await expect(options.first()).toContainText('@sales_by_region');
    await input.press('Enter');
    await input.pressSequentially('with @sales_2026');
    await expect(options.filter({ hasText: 'sales_2026.csv' })).toHaveCount(1);
    await options.filter({ hasText: 'sales_2026.csv' }).click();
    await expect(
      panel.locator('.jp-hdsp-Chip', { hasText: '@sales_by_region' })
    ).toBeVisible();
    await expect(
      panel.locator('.jp-hdsp-Chip', { hasText: '@sales_2026.csv' })
    ).toBeVisible();
    await input.press('Enter');

    await expect(
      panel.locator('.jp-hdsp-Message-assistant').last()
    ).toContainText('Looked at them.');
    const [sent] = await modelRequests(request);
    const system = sent.messages[0].content as string;
    expect(system).toContain('- kernel variable sales_by_region');
    expect(system).toMatch(/- file .*sales_2026\.csv/);
  });

  test("@ offers the kernel's variables before anything else, no keywords or builtins, and no checkpoint copies", async ({
    page,
    request,
    tmpPath
  }) => {
    await page.notebook.createNew('ranked.ipynb');
    await page.notebook.setCell(0, 'code', 'import json\ndf = {"a": 1}');
    await page.notebook.runCell(0, true);
    await page.notebook.save();
    // Jupyter's copy of the notebook, in its hidden .ipynb_checkpoints folder.
    await request.post(`/api/contents/${tmpPath}/ranked.ipynb/checkpoints`);
    const panel = await openPanel(page);
    await panel.getByRole('button', { name: 'New chat' }).click();
    const input = panel.getByRole('textbox', { name: 'Message' });
    const options = panel
      .getByRole('listbox', { name: 'Mention' })
      .getByRole('option');

    await input.pressSequentially('look at @d');
    await expect(options.first()).toContainText('@df');
    const labels = await options.allTextContents();
    for (const word of ['@def', '@del', '@dir', '@dict']) {
      expect(labels.some(label => label.startsWith(word))).toBe(false);
    }
    // A module only when its whole name is typed.
    await input.fill('');
    await input.pressSequentially('@js');
    await expect(options.filter({ hasText: '@json' })).toHaveCount(0);
    await input.pressSequentially('on');
    await expect(options.filter({ hasText: /^@json/ })).toHaveCount(1);

    await input.fill('');
    await input.pressSequentially('@ranked');
    await expect(options.filter({ hasText: 'ranked.ipynb' })).toHaveCount(1);
    // (The test's own folder name holds "checkpoint": look for Jupyter's folder of copies.)
    await expect(options.filter({ hasText: '.ipynb_checkpoints' })).toHaveCount(
      0
    );
  });
});
