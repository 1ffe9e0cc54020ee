import { expect, test } from '@jupyterlab/galata';

import {
  failOnConsoleErrors,
  loadScript,
  openPanel,
  screenshot,
  sendInNewChat
} from './helpers';

/**
 * The lab's configuration (jupyter_server_test_config.py) has one MCP server, "demo" (the Python tests'
 * demo server over stdio), and one disabled entry, "off".
 */
test.describe('MCP servers in the sidebar', () => {
  failOnConsoleErrors();

  test('a configured server starts and its tools are listed', async ({
    page
  }, testInfo) => {
    const panel = await openPanel(page);

    await panel.getByRole('button', { name: 'MCP', exact: true }).click();

    const drawer = panel.getByRole('region', { name: 'MCP servers' });
    const demo = drawer.locator('.jp-hdsp-McpServer[data-server="demo"]');
    await expect(demo).toHaveAttribute('data-state', 'connected');
    await expect(demo.getByText('connected', { exact: true })).toBeVisible();
    const tools = demo.getByRole('list', { name: 'Tools of demo' });
    for (const tool of ['echo', 'picture', 'crash']) {
      await expect(tools.getByText(tool, { exact: true })).toBeVisible();
    }
    await expect(
      tools.getByRole('listitem').filter({ hasText: 'echo' })
    ).toContainText('autoApprove');
    const off = drawer.locator('.jp-hdsp-McpServer[data-server="off"]');
    await expect(off).toHaveAttribute('data-state', 'disabled');
    await expect(drawer.getByRole('alert')).toHaveCount(0);
    await screenshot(page, testInfo, 'mcp-servers.png');

    // Refresh asks the server again; the server stays connected with the same tools.
    await drawer.getByRole('button', { name: 'Refresh MCP servers' }).click();
    await expect(drawer).toHaveAttribute('aria-busy', 'false');
    await expect(demo).toHaveAttribute('data-state', 'connected');
    await expect(tools.getByText('echo', { exact: true })).toBeVisible();

    // The same button closes the drawer.
    await panel.getByRole('button', { name: 'MCP', exact: true }).click();
    await expect(drawer).toHaveCount(0);
  });

  test('the agent calls an MCP tool behind the approval dialog; autoApprove tools run at once', async ({
    page,
    request
  }, testInfo) => {
    await loadScript(request, [
      { tool_calls: [['demo__picture', '{}']] },
      {
        tool_calls: [['demo__echo', '{"text": "hello from demo", "times": 1}']]
      },
      { text: 'The demo server answered.' }
    ]);
    const panel = await openPanel(page);
    await sendInNewChat(panel, 'Use the demo server');

    const dialog = panel.getByRole('dialog', {
      name: 'Use the tool demo__picture?'
    });
    await expect(dialog).toBeVisible({ timeout: 30_000 });
    await screenshot(page, testInfo, 'mcp-approval.png');
    await dialog.getByRole('button', { name: 'Allow once' }).click();

    const cards = panel.locator('.jp-hdsp-ToolCard');
    await expect(cards.nth(0)).toHaveAttribute('data-status', 'done');
    // The server's picture is shown in the card (a real 2x1 PNG decoded by the browser).
    const picture = cards.nth(0).locator('img.jp-hdsp-ToolCard-image');
    await expect(picture).toBeVisible();
    expect(
      await picture.evaluate((img: HTMLImageElement) => img.naturalWidth)
    ).toBe(2);
    // echo is in the server's autoApprove: no dialog.
    await expect(cards.nth(1)).toHaveAttribute('data-status', 'done');
    await cards.nth(1).locator('.jp-hdsp-ToolCard-header').click();
    await expect(cards.nth(1).locator('.jp-hdsp-ToolCard-body')).toContainText(
      'hello from demo'
    );
    await expect(
      panel.locator('.jp-hdsp-Message-assistant').last()
    ).toContainText('The demo server answered.');
    await expect(panel.getByRole('dialog')).toHaveCount(0);
  });
});
