import { expect, test } from '@jupyterlab/galata';

import {
  failOnConsoleErrors,
  loadScript,
  PANEL_ID,
  modelRequests,
  openPanel,
  screenshot,
  sendInNewChat
} from './helpers';

test.describe('hdsp-agent approvals', () => {
  failOnConsoleErrors();

  test('approving run_cell runs the code in the open notebook', async ({
    page,
    request,
    tmpPath
  }, testInfo) => {
    await loadScript(request, [
      { tool_calls: [['run_cell', '{"code": "print(6*7)"}']] },
      { text: 'The cell printed **42**.' }
    ]);
    await page.notebook.createNew('compute.ipynb');
    await page.notebook.setCell(0, 'code', 'x = 1');
    await page.notebook.save();
    const panel = await openPanel(page);
    await expect(panel.locator('.jp-hdsp-Chip').first()).toContainText(
      'compute.ipynb'
    );

    await sendInNewChat(panel, 'Compute 6*7 in my notebook');

    const dialog = panel.getByRole('dialog', {
      name: 'Run a cell in compute.ipynb?'
    });
    await expect(dialog).toBeVisible();
    await expect(dialog.getByLabel('Preview')).toHaveText('print(6*7)');
    await expect(
      dialog.locator('.jp-hdsp-ApprovalCard-reasons li')
    ).not.toHaveCount(0);
    await expect(dialog).toContainText('compute.ipynb');
    await expect(
      panel.locator('.jp-hdsp-ToolCard[data-status="awaiting_approval"]')
    ).toBeVisible();
    await screenshot(page, testInfo, 'approval-dialog.png');

    await dialog.getByRole('button', { name: 'Allow once' }).click();

    await expect(dialog).toBeHidden();
    const card = panel.locator('.jp-hdsp-ToolCard').first();
    await expect(card).toHaveAttribute('data-status', 'done', {
      timeout: 60_000
    });
    await card.locator('.jp-hdsp-ToolCard-header').click();
    await expect(card.locator('.jp-hdsp-ToolCard-body')).toContainText('42');
    await expect(
      panel.locator('.jp-hdsp-Message-assistant').last()
    ).toContainText('The cell printed 42.');

    // The new cell and its output appear in the open notebook, below the user's cell.
    const notebook = page.locator('.jp-NotebookPanel:visible');
    await expect(notebook.locator('.jp-Cell')).toHaveCount(2);
    await expect(
      notebook.locator('.jp-Cell').nth(1).locator('.jp-OutputArea-output')
    ).toHaveText('42');

    // The active notebook reached the model as context.
    const [first] = await modelRequests(request);
    expect(first.messages[0].content).toContain(`${tmpPath}/compute.ipynb`);
    expect(first.tools.map((tool: any) => tool.function.name)).toContain(
      'run_cell'
    );
    await screenshot(page, testInfo, 'run-cell-approved.png');

    // Undo restores the notebook as it was before the turn.
    await panel.getByRole('button', { name: 'Undo', exact: true }).click();
    await expect(panel.locator('.jp-hdsp-Notice.jp-mod-undone')).toContainText(
      'Undid the last turn'
    );
    await expect(panel.locator('.jp-hdsp-Notice.jp-mod-undone')).toContainText(
      'compute.ipynb'
    );
    await expect(notebook.locator('.jp-Cell')).toHaveCount(1);
    await expect(notebook.locator('.jp-Cell').first()).toContainText('x = 1');
    await expect(
      panel.getByRole('button', { name: 'Undo', exact: true })
    ).toBeDisabled();
    await screenshot(page, testInfo, 'run-cell-undone.png');
  });

  test('denying with a reason tells the model, which answers', async ({
    page,
    request
  }, testInfo) => {
    await loadScript(request, [
      {
        tool_calls: [
          [
            'create_new_file',
            '{"filepath": "notes.txt", "contents": "hello\\nworld\\n"}'
          ]
        ]
      },
      { text: 'Understood: no new file.' }
    ]);
    const panel = await openPanel(page);

    await sendInNewChat(panel, 'Write my notes to a file');

    const dialog = panel.getByRole('dialog', {
      name: 'Create the file notes.txt?'
    });
    await expect(dialog).toBeVisible();
    await dialog.getByRole('button', { name: 'Deny…' }).click();
    const reason = dialog.getByRole('textbox', { name: 'Reason for denying' });
    await expect(reason).toBeFocused();
    await reason.fill('keep the notes in the notebook');
    await reason.press('Enter');

    await expect(dialog).toBeHidden();
    const card = panel.locator('.jp-hdsp-ToolCard').first();
    await expect(card).toHaveAttribute('data-status', 'denied');
    await expect(card.locator('.jp-hdsp-ToolCard-denied')).toHaveText(
      'Denied: keep the notes in the notebook'
    );
    await expect(
      panel.locator('.jp-hdsp-Message-assistant').last()
    ).toContainText('Understood: no new file.');

    const requests = await modelRequests(request);
    const toolMessage = requests[1].messages.find(
      (message: any) => message.role === 'tool'
    );
    expect(toolMessage.content).toContain('keep the notes in the notebook');
    await screenshot(page, testInfo, 'denied-with-reason.png');
  });

  test('read-only mode reaches the server: nothing that changes files is offered or run', async ({
    page,
    request
  }, testInfo) => {
    await loadScript(request, [
      {
        tool_calls: [
          ['create_new_file', '{"filepath": "blocked.txt", "contents": "x"}']
        ]
      },
      { text: 'I can only read in this mode.' }
    ]);
    const panel = await openPanel(page);
    await panel
      .getByRole('combobox', { name: 'Mode', exact: true })
      .selectOption('read-only');

    await sendInNewChat(panel, 'Create a file');

    await expect(
      panel.locator('.jp-hdsp-Message-assistant').last()
    ).toContainText('I can only read in this mode.');
    await expect(panel.getByRole('dialog')).toHaveCount(0);
    const card = panel.locator('.jp-hdsp-ToolCard').first();
    await expect(card).toHaveAttribute('data-status', /errored|denied/);
    const [first] = await modelRequests(request);
    const offered = first.tools.map((tool: any) => tool.function.name);
    expect(offered).toContain('read_file');
    expect(offered).not.toContain('create_new_file');
    const listing = await request.get('/api/contents/blocked.txt');
    expect(listing.status()).toBe(404);
    await screenshot(page, testInfo, 'read-only-mode.png');
    await panel
      .getByRole('combobox', { name: 'Mode', exact: true })
      .selectOption('default');
  });

  test('an approval asked while the sidebar is closed shows a notification that opens it', async ({
    page,
    request
  }, testInfo) => {
    await loadScript(request, [
      {
        tool_calls: [
          ['create_new_file', '{"filepath": "later.txt", "contents": "x"}']
        ],
        pieces: 4,
        delay: 0.5
      },
      { text: 'Fine, no file.' }
    ]);
    const panel = await openPanel(page);
    await sendInNewChat(panel, 'Make a file');
    const tab = page.locator(
      `.jp-SideBar.jp-mod-right .lm-TabBar-tab[data-id="${PANEL_ID}"]`
    );
    await tab.click();
    await expect(panel).toBeHidden();

    const toast = page.locator('.jp-Notification-Toast-warning', {
      hasText: 'hdsp-agent waits for your approval to run create_new_file'
    });
    await expect(toast).toBeVisible();
    await screenshot(page, testInfo, 'approval-notification.png');
    await toast.getByRole('button', { name: 'Review' }).click();

    await expect(panel).toBeVisible();
    const dialog = panel.getByRole('dialog', {
      name: 'Create the file later.txt?'
    });
    await dialog.getByRole('button', { name: 'Deny…' }).click();
    await dialog.getByRole('button', { name: 'Deny', exact: true }).click();
    await expect(
      panel.locator('.jp-hdsp-Message-assistant').last()
    ).toContainText('Fine, no file.');
    // Answered: the notice is taken back.
    await expect(toast).toHaveCount(0);
  });
});
