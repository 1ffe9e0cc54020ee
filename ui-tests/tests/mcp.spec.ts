import { expect, test } from '@jupyterlab/galata';

import { failOnConsoleErrors, openPanel, screenshot } from './helpers';

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
});
