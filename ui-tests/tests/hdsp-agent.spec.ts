import { expect, test } from '@jupyterlab/galata';
import { Locator } from '@playwright/test';

import {
  agentPanel,
  failOnConsoleErrors,
  PANEL_ID,
  screenshot
} from './helpers';

const VERSION: string = require('../../package.json').version;

async function expectConnectedWithTools(panel: Locator): Promise<void> {
  await expect(panel).toBeVisible();
  // At the default 250 px the title gives way to the header's buttons (it is also the tab's name).
  await expect(
    panel.getByRole('heading', { name: 'hdsp-agent' })
  ).toBeAttached();
  const serverInfo = panel.locator('.jp-hdsp-ServerInfo summary');
  await expect(serverInfo).toContainText(
    `Connected to hdsp-agent server ${VERSION} ·`
  );
  await serverInfo.click();
  await expect(panel.getByText('ls', { exact: true })).toBeVisible();
  await expect(panel.getByRole('alert')).toHaveCount(0);
}

test.describe('hdsp-agent sidebar', () => {
  failOnConsoleErrors();

  test('opens from its icon in the right sidebar and lists the server tools', async ({
    page
  }, testInfo) => {
    const tab = page.locator(
      `.jp-SideBar.jp-mod-right .lm-TabBar-tab[data-id="${PANEL_ID}"]`
    );
    await expect(tab).toBeVisible();
    await expect(agentPanel(page)).toBeHidden();

    await tab.click();

    await expectConnectedWithTools(agentPanel(page));
    await screenshot(page, testInfo, 'sidebar-icon.png');
  });

  test('opens from the command palette', async ({ page }, testInfo) => {
    await expect(agentPanel(page)).toBeHidden();

    await page.keyboard.press('Control+Shift+C');
    const palette = page.locator('#command-palette');
    await palette.locator('.lm-CommandPalette-input').fill('Open hdsp-agent');
    const item = palette.locator('.lm-CommandPalette-item', {
      hasText: 'Open hdsp-agent'
    });
    await expect(item).toHaveCount(1);
    await item.click();

    await expectConnectedWithTools(agentPanel(page));
    await screenshot(page, testInfo, 'command-palette.png');
  });

  test('opens with Accel Shift A and focuses the message box', async ({
    page
  }, testInfo) => {
    await expect(agentPanel(page)).toBeHidden();

    await page.keyboard.press('Control+Shift+A');

    const input = agentPanel(page).getByRole('textbox', { name: 'Message' });
    await expect(input).toBeVisible();
    await expect(input).toBeFocused();
    await screenshot(page, testInfo, 'shortcut.png');
  });
});
