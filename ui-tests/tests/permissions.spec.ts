import { expect, test } from '@jupyterlab/galata';

import {
  failOnConsoleErrors,
  loadScript,
  openPanel,
  sendInNewChat
} from './helpers';

/**
 * "Always allow" is visible and revocable: the user picks where it applies, sees it (and the chat's
 * grants) in the Permissions view, and removes it there; the server forgets it.
 */
test.describe('hdsp-agent permissions', () => {
  failOnConsoleErrors();

  test.afterEach(async ({ request }) => {
    // Whatever happened, leave no saved rule to later tests.
    const reply = await request.get('/hdsp-agent/permissions');
    for (const rule of (await reply.json()).saved) {
      await request.post('/hdsp-agent/permissions/revoke', {
        data: { kind: 'saved', rule }
      });
    }
  });

  test('always allow asks where, and the Permissions view lists and removes it', async ({
    page,
    request
  }) => {
    await loadScript(request, [
      {
        tool_calls: [
          [
            'create_new_file',
            JSON.stringify({ filepath: 'notes/a.txt', contents: 'a\n' })
          ]
        ]
      },
      { text: 'Saved your note.' }
    ]);
    const panel = await openPanel(page);
    await sendInNewChat(panel, 'Write a note');

    const dialog = panel.getByRole('dialog', {
      name: 'Create the file a.txt?'
    });
    await dialog.getByRole('button', { name: 'Always allow…' }).click();
    const where = dialog.getByRole('group', { name: 'Always allow where?' });
    await expect(
      where.getByRole('button', { name: 'Only a.txt' })
    ).toBeVisible();
    await where
      .getByRole('button', { name: 'Anything in the folder notes' })
      .click();
    await expect(
      panel.locator('.jp-hdsp-Message-assistant').last()
    ).toContainText('Saved your note.');

    await panel.getByRole('button', { name: 'Permissions' }).click();
    const view = panel.getByRole('region', { name: 'Permissions' });
    // The chat's own grant, in words, and the saved rule, with where it applies.
    await expect(view).toContainText('Allowed for this chat');
    await expect(
      view.locator('.jp-hdsp-Permissions-list').first()
    ).toContainText('Create a.txt');
    const saved = view
      .locator('.jp-hdsp-Permissions-list')
      .last()
      .locator('li');
    await expect(saved).toHaveCount(1);
    await expect(saved).toHaveText(/Create a file, in the folder notes/);
    await expect(saved).not.toContainText('create_new_file');
    const rule = (await saved.getAttribute('data-rule'))!;
    expect(rule).toMatch(/^create_new_file\(.*notes\/\*\*\)$/);
    let listed = await (await request.get('/hdsp-agent/permissions')).json();
    expect(listed.saved).toEqual([rule]);

    await saved.getByRole('button', { name: /^Remove: Create a file/ }).click();

    await expect(view).toContainText('No rules saved.');
    listed = await (await request.get('/hdsp-agent/permissions')).json();
    expect(listed.saved).toEqual([]);
  });
});
