import { expect, test } from '@jupyterlab/galata';

import {
  failOnConsoleErrors,
  loadScript,
  modelRequests,
  openPanel,
  screenshot
} from './helpers';

test.describe('asking the agent from the notebook', () => {
  failOnConsoleErrors();

  test('"Fix with agent" on a KeyError output starts a turn with the traceback in it', async ({
    page,
    request
  }, testInfo) => {
    await loadScript(request, [
      { text: 'The dict has no key `missing`; use `.get`.' }
    ]);
    await page.notebook.createNew('errors.ipynb');
    await page.notebook.setCell(
      0,
      'code',
      "scores = {'a': 1}\nscores['missing']"
    );
    await page.notebook.runCell(0, true);
    const cell = page.locator('.jp-NotebookPanel:visible .jp-Cell').first();
    await expect(cell.locator('.jp-OutputArea-output')).toContainText(
      'KeyError'
    );
    await openPanel(page);

    // The action is in the failed cell's context menu (and the command palette).
    await cell.locator('.jp-OutputArea-output').click({ button: 'right' });
    await page.getByRole('menuitem', { name: 'Fix with agent' }).click();

    const panel = page.locator('#hdsp-agent-panel');
    await expect(
      panel.locator('.jp-hdsp-Message-assistant').last()
    ).toContainText('use .get');
    const [sent] = await modelRequests(request);
    const message = sent.messages.at(-1);
    expect(message.role).toBe('user');
    expect(message.content).toContain("KeyError: 'missing'");
    expect(message.content).toContain('errors.ipynb');
    expect(message.content).toContain("scores['missing']");
    expect(message.content).toMatch(/Traceback|KeyError\s+Traceback|----> 2/);
    expect(message.content).not.toMatch(/\u001b\[/);
    await screenshot(page, testInfo, 'fix-with-agent.png');
  });
});
