import { expect, test } from '@playwright/test';

import { loadScript, openPanel, sendInNewChat } from '../tests/helpers';

const PASSWORD = 'hub-test-password'; // tests/hub_process.py

test('alice logs in at the hub, and her sidebar runs an approved cell in her open notebook', async ({
  page,
  request
}) => {
  await loadScript(request, [
    { tool_calls: [['run_cell', JSON.stringify({ code: 'print(6*7)' })]] },
    { text: 'Done: **42**.' }
  ]);
  await page.goto('/hub/login');
  await page.locator('input[name="username"]').fill('alice');
  await page.locator('input[name="password"]').fill(PASSWORD);
  await page
    .locator('input[type="submit"], button[type="submit"]')
    .first()
    .click();
  await page.waitForURL(/\/user\/alice\/lab/, { timeout: 60_000 });

  await page.goto('/user/alice/lab/tree/hub.ipynb');
  const notebook = page.locator('.jp-NotebookPanel:visible');
  await expect(notebook).toBeVisible({ timeout: 60_000 });
  await expect(
    page.locator('.jp-Notebook-ExecutionIndicator[data-status="idle"]')
  ).toHaveCount(1, { timeout: 60_000 });

  const panel = await openPanel(page);
  await sendInNewChat(panel, 'Compute 6*7');
  const dialog = panel.getByRole('dialog', {
    name: 'Run a cell in hub.ipynb?'
  });
  await dialog.getByRole('button', { name: 'Allow once' }).click();

  const card = panel.locator('.jp-hdsp-ToolCard').first();
  await expect(card).toHaveAttribute('data-status', 'done', {
    timeout: 60_000
  });
  const agentCell = notebook.locator('.jp-CodeCell').last();
  await expect(agentCell.locator('.jp-OutputArea-output')).toHaveText('42');
  await expect(
    panel.locator('.jp-hdsp-Message-assistant').last()
  ).toContainText('Done: 42.');
  // Every request of the sidebar went to alice's own server, under her prefix.
  expect(page.url()).toContain('/user/alice/lab');
});
