/**
 * A chat is tied to its notebook(s) (one test, one lab page start): a new notebook from the launcher offers a new chat (nothing is switched
 * until the user says so, the composer keeps its text, the new chat starts in the default mode), going back
 * to the first notebook brings its chat back, the history names each chat's notebook, and a call that changes
 * a notebook other than the one in view says so on its card, before the approval too.
 */
import { expect, test } from '@jupyterlab/galata';

import {
  failOnConsoleErrors,
  loadScript,
  openPanel,
  sendInNewChat
} from './helpers';

test.describe('a chat and its notebooks', () => {
  failOnConsoleErrors();

  test('a new notebook offers a new chat in the default mode; the first notebook brings its chat back; a card says when a call acts on another notebook', async ({
    page,
    request,
    tmpPath
  }) => {
    await loadScript(request, [{ text: 'Looked at first.ipynb.' }]);
    await page.notebook.createNew('first.ipynb');
    const panel = await openPanel(page);
    const mode = panel.getByRole('combobox', { name: 'Mode', exact: true });
    await mode.selectOption('read-only');
    await sendInNewChat(panel, 'Hello from the first notebook');
    await expect(
      panel.locator('.jp-hdsp-Message-assistant').last()
    ).toContainText('Looked at first.ipynb.');
    const input = panel.getByRole('textbox', { name: 'Message' });
    await input.fill('a question I am still writing');

    // A new notebook from the launcher: the chat is offered, not switched under the user.
    await page.menu.clickMenuItem('File>New Launcher');
    await page
      .locator('.jp-LauncherCard[data-category="Notebook"]:visible')
      .first()
      .click();
    const offer = panel.locator('.jp-hdsp-ChatOffer');
    await expect(offer).toContainText('Untitled.ipynb is not in this chat.');
    await expect(panel.locator('.jp-hdsp-Message-user')).toHaveCount(1);

    await offer
      .getByRole('button', { name: 'Start a chat for Untitled.ipynb' })
      .click();
    await expect(offer).toBeHidden();
    await expect(panel.locator('.jp-hdsp-Message')).toHaveCount(0);
    await expect(mode).toHaveValue('default');
    await expect(input).toHaveValue('a question I am still writing');

    // Back in the first notebook: its chat, as it was.
    await page.notebook.activate('first.ipynb');
    await expect(panel.locator('.jp-hdsp-Message-user')).toContainText(
      'Hello from the first notebook'
    );
    await expect(offer).toBeHidden();
    await expect(input).toHaveValue('a question I am still writing');

    // The history names the notebook of each chat.
    await panel.getByRole('button', { name: 'History' }).click();
    await expect(
      panel.locator('.jp-hdsp-ConversationList-item.jp-mod-active')
    ).toContainText('first.ipynb');
    await panel.getByRole('button', { name: 'History' }).click();

    // The agent changes another notebook while the user watches this one: the cards say where, the
    // approval before the user decides.
    const other = `${tmpPath}/other.ipynb`;
    const notebook = {
      cells: [],
      metadata: {
        kernelspec: { name: 'python3', display_name: 'Python 3' }
      },
      nbformat: 4,
      nbformat_minor: 5
    };
    await request.put(`/api/contents/${other}`, {
      data: { type: 'notebook', format: 'json', content: notebook }
    });
    await loadScript(request, [
      {
        tool_calls: [
          ['insert_cell', JSON.stringify({ path: other, source: 'x = 1' })]
        ]
      },
      { tool_calls: [['insert_cell', JSON.stringify({ source: 'y = 2' })]] },
      { text: 'Added a cell to each.' }
    ]);

    await input.fill('Add a cell there and one here');
    await input.press('Enter');

    const cards = panel.locator('.jp-hdsp-ToolCard');
    const waiting = panel.getByRole('dialog');
    await expect(waiting).toContainText(
      'In other.ipynb, not the document in view.'
    );
    await waiting.getByRole('button', { name: 'Allow once' }).click();
    // The next call, in the notebook in view: its approval says nothing of the kind.
    await expect(cards.nth(1)).toHaveAttribute(
      'data-status',
      'awaiting_approval'
    );
    await expect(waiting).toBeVisible();
    await expect(waiting).not.toContainText('not the document in view');
    await waiting.getByRole('button', { name: 'Allow once' }).click();

    await expect(cards).toHaveCount(2);
    await expect(cards.nth(1)).toHaveAttribute('data-status', 'done');
    await expect(
      cards.nth(0).locator('.jp-hdsp-ToolCard-elsewhere')
    ).toHaveText('in other.ipynb');
    // The one in the notebook in view needs no such word.
    await expect(
      cards.nth(1).locator('.jp-hdsp-ToolCard-elsewhere')
    ).toHaveCount(0);
  });
});
