import { expect, IJupyterLabPageFixture, test } from '@jupyterlab/galata';
import { Locator, TestInfo } from '@playwright/test';

const PANEL_ID = 'hdsp-agent-panel';
const VERSION: string = require('../../package.json').version;

function agentPanel(page: IJupyterLabPageFixture): Locator {
  return page.locator(`#${PANEL_ID}`);
}

async function expectConnectedWithTools(panel: Locator): Promise<void> {
  await expect(panel).toBeVisible();
  await expect(
    panel.getByRole('heading', { name: 'hdsp-agent' })
  ).toBeVisible();
  await expect(panel.getByRole('status')).toContainText(
    `Connected to hdsp-agent server ${VERSION} ·`
  );
  await expect(panel.getByText('ls', { exact: true })).toBeVisible();
  await expect(panel.getByRole('alert')).toHaveCount(0);
}

async function screenshot(
  page: IJupyterLabPageFixture,
  testInfo: TestInfo,
  name: string
): Promise<void> {
  const path = testInfo.outputPath(name);
  await page.screenshot({ path });
  await testInfo.attach(name, { path, contentType: 'image/png' });
}

test.describe('hdsp-agent sidebar', () => {
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
});
