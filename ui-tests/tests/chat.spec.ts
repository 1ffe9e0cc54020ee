import { expect, test } from '@jupyterlab/galata';
import { readFileSync } from 'fs';

import {
  failOnConsoleErrors,
  loadScript,
  modelRequests,
  openPanel,
  screenshot,
  sendInNewChat
} from './helpers';

test.describe('hdsp-agent chat', () => {
  failOnConsoleErrors();

  test('streams the answer as Markdown', async ({
    page,
    request
  }, testInfo) => {
    await loadScript(request, [
      {
        text: 'Here is **bold** advice.\n\n```python\nprint(6 * 7)\n```\n',
        pieces: 12,
        delay: 0.1,
        reasoning: 'The user wants a greeting.'
      }
    ]);
    const panel = await openPanel(page);

    await sendInNewChat(panel, 'Say hello');

    const answer = panel.locator('.jp-hdsp-Message-assistant').last();
    await expect(answer).toHaveAttribute('data-complete', 'false');
    await expect(answer.locator('strong')).toHaveText('bold');
    await expect(answer).toHaveAttribute('data-complete', 'true');
    await expect(answer.locator('.jp-hdsp-CodeBlock pre')).toContainText(
      'print(6 * 7)'
    );
    await expect(answer.getByRole('button', { name: 'Run' })).toBeVisible();
    await expect(answer.locator('.jp-hdsp-Reasoning')).not.toHaveAttribute(
      'open'
    );
    await expect(panel.getByRole('button', { name: 'Send' })).toBeVisible();

    const requests = await modelRequests(request);
    expect(requests[0].messages.at(-1)).toMatchObject({
      role: 'user',
      content: 'Say hello'
    });
    await screenshot(page, testInfo, 'streamed-answer.png');
  });
});

test.describe('hdsp-agent code blocks', () => {
  failOnConsoleErrors();

  test('a code block of the answer runs and inserts in the open notebook', async ({
    page,
    request
  }, testInfo) => {
    await loadScript(request, [
      { text: 'Run this:\n\n```python\nprint(6 * 7)\n```\n' }
    ]);
    await page.notebook.createNew('blocks.ipynb');
    const panel = await openPanel(page);
    await sendInNewChat(panel, 'How do I compute 6*7?');
    const answer = panel.locator('.jp-hdsp-Message-assistant').last();
    await expect(answer).toHaveAttribute('data-complete', 'true');

    await answer.getByRole('button', { name: 'Run' }).click();

    const notebook = page.locator('.jp-NotebookPanel:visible');
    await expect(notebook.locator('.jp-Cell')).toHaveCount(2);
    await expect(notebook.locator('.jp-Cell').nth(1)).toContainText(
      'print(6 * 7)'
    );
    await expect(
      notebook.locator('.jp-Cell').nth(1).locator('.jp-OutputArea-output')
    ).toHaveText('42', {
      timeout: 60_000
    });

    await answer.getByRole('button', { name: 'Insert' }).click();
    await expect(notebook.locator('.jp-Cell')).toHaveCount(3);
    await expect(notebook.locator('.jp-Cell').nth(2)).toContainText(
      'print(6 * 7)'
    );
    await expect(
      notebook.locator('.jp-Cell').nth(2).locator('.jp-OutputArea-output')
    ).toHaveCount(0);
    await screenshot(page, testInfo, 'code-block-run.png');
    // Leave no unsaved notebook behind (a reload would ask about it).
    await page.notebook.save();
  });
});

test.describe('hdsp-agent turns and conversations', () => {
  failOnConsoleErrors();

  const slowAnswer = (words: number) =>
    Array.from({ length: words }, (_, index) => `word${index}`).join(' ');

  test('the stop button and Escape stop a streaming answer', async ({
    page,
    request
  }, testInfo) => {
    const long = slowAnswer(80);
    await loadScript(request, [
      { text: long, pieces: 80, delay: 0.1 },
      { text: long, pieces: 80, delay: 0.1 }
    ]);
    const panel = await openPanel(page);

    await sendInNewChat(panel, 'Tell me a long story');
    const answer = panel.locator('.jp-hdsp-Message-assistant').last();
    await expect(answer).toContainText('word3');
    await panel.getByRole('button', { name: 'Stop' }).click();

    await expect(
      panel.locator('.jp-hdsp-Notice[data-reason="canceled"]')
    ).toHaveText('Stopped.');
    await expect(panel.getByRole('button', { name: 'Send' })).toBeVisible();
    await expect(answer).toHaveAttribute('data-complete', 'true');
    expect(await answer.textContent()).not.toContain('word79');
    await screenshot(page, testInfo, 'stopped.png');

    // Escape in the message box stops too.
    const input = panel.getByRole('textbox', { name: 'Message' });
    await input.fill('Another long story');
    await input.press('Enter');
    await expect(
      panel.locator('.jp-hdsp-Message-assistant').nth(1)
    ).toContainText('word3');
    await input.press('Escape');
    await expect(
      panel.locator('.jp-hdsp-Notice[data-reason="canceled"]')
    ).toHaveCount(2);
    await expect(panel.getByRole('button', { name: 'Send' })).toBeVisible();
  });

  test('a reload in the middle of a turn picks the conversation up where it is', async ({
    page,
    request
  }, testInfo) => {
    const long = slowAnswer(40);
    await loadScript(request, [{ text: long, pieces: 40, delay: 0.15 }]);
    let panel = await openPanel(page);

    await sendInNewChat(panel, 'Count slowly');
    await expect(panel.locator('.jp-hdsp-Message-assistant')).toContainText(
      'word2'
    );

    await page.reload();
    panel = await openPanel(page);

    await expect(panel.locator('.jp-hdsp-Message-user')).toHaveText([
      'Count slowly'
    ]);
    const answer = panel.locator('.jp-hdsp-Message-assistant');
    await expect(answer).toHaveAttribute('data-complete', 'true', {
      timeout: 30_000
    });
    // Replayed and live events are applied once each: the text appears exactly once.
    await expect(answer).toHaveCount(1);
    await expect(answer.locator('.jp-hdsp-Markdown')).toHaveText(long);
    await screenshot(page, testInfo, 'reloaded-mid-turn.png');
  });

  test('conversations survive a reload and can be renamed, exported and deleted', async ({
    page,
    request
  }, testInfo) => {
    await loadScript(request, [
      { text: 'Answer about apples.' },
      { text: 'Answer about pears.' }
    ]);
    let panel = await openPanel(page);
    await sendInNewChat(panel, 'Tell me about apples');
    await expect(panel.locator('.jp-hdsp-Message-assistant')).toHaveText(
      'Answer about apples.'
    );
    await sendInNewChat(panel, 'Tell me about pears');
    await expect(panel.locator('.jp-hdsp-Message-assistant')).toHaveText(
      'Answer about pears.'
    );

    await page.reload();
    panel = await openPanel(page);

    await panel.getByRole('button', { name: 'History' }).click();
    const list = panel.getByRole('list', { name: 'Conversations' });
    await expect(list.getByText('Tell me about apples')).toBeVisible();
    await expect(list.getByText('Tell me about pears')).toBeVisible();
    await screenshot(page, testInfo, 'history.png');

    // Each conversation comes back whole from the server's log.
    await list.getByText('Tell me about pears').click();
    await expect(panel.locator('.jp-hdsp-Message-user')).toHaveText([
      'Tell me about pears'
    ]);
    await expect(panel.locator('.jp-hdsp-Message-assistant')).toHaveText(
      'Answer about pears.'
    );
    await panel.getByRole('button', { name: 'History' }).click();
    await list.getByText('Tell me about apples').click();
    await expect(panel.locator('.jp-hdsp-Message-user')).toHaveText([
      'Tell me about apples'
    ]);
    await expect(panel.locator('.jp-hdsp-Message-assistant')).toHaveText(
      'Answer about apples.'
    );

    await panel.getByRole('button', { name: 'History' }).click();
    await list
      .getByRole('button', { name: 'Rename "Tell me about apples"' })
      .click();
    const dialog = page.locator('.jp-Dialog');
    await dialog.locator('input').fill('Fruit notes');
    await dialog.getByRole('button', { name: 'Rename' }).click();
    await expect(list.getByText('Fruit notes')).toBeVisible();

    const download = page.waitForEvent('download');
    await list
      .getByRole('button', { name: 'Export "Fruit notes" as Markdown' })
      .click();
    const file = await download;
    expect(file.suggestedFilename()).toBe('Fruit notes.md');
    const exported = readFileSync(await file.path(), 'utf-8');
    expect(exported).toContain('Answer about apples.');

    await list
      .getByRole('button', { name: 'Delete "Tell me about pears"' })
      .click();
    await page
      .locator('.jp-Dialog')
      .getByRole('button', { name: 'Delete' })
      .click();
    await expect(list.getByText('Tell me about pears')).toHaveCount(0);

    await page.reload();
    panel = await openPanel(page);
    await panel.getByRole('button', { name: 'History' }).click();
    await expect(
      panel
        .getByRole('list', { name: 'Conversations' })
        .getByText('Fruit notes')
    ).toBeVisible();
    await expect(panel.getByText('Tell me about pears')).toHaveCount(0);
  });

  test('a plot a cell drew shows in its card for a model that reads no images, and the export keeps it', async ({
    page,
    request
  }, testInfo) => {
    // An 8×6 PNG, displayed the way a plotting library's figure is (display_data with image/png).
    const png =
      'iVBORw0KGgoAAAANSUhEUgAAAAgAAAAGCAIAAABxZ0isAAAAEklEQVR4nGP4z8CAFWEXpZMEADMoL9HswQX5AAAAAElFTkSuQmCC';
    const code = `from base64 import b64decode\nfrom IPython.display import Image, display\ndisplay(Image(data=b64decode("${png}")))`;
    await loadScript(request, [
      { tool_calls: [['run_cell', JSON.stringify({ code })]] },
      { text: 'Plotted.' }
    ]);
    await page.notebook.createNew('plot.ipynb');
    const panel = await openPanel(page);
    await sendInNewChat(panel, 'Plot it');
    await panel
      .getByRole('dialog', { name: /^Run a cell in .*\.ipynb\?$/ })
      .getByRole('button', { name: 'Allow once' })
      .click();
    const card = panel.locator('.jp-hdsp-ToolCard').first();
    await expect(card).toHaveAttribute('data-status', 'done', {
      timeout: 60_000
    });
    await expect(panel.locator('.jp-hdsp-Message-assistant')).toHaveText(
      'Plotted.'
    );

    // The model (no vision) read a placeholder inside its envelope; the user sees the picture.
    const requests = await modelRequests(request);
    const toolMessage = requests[1].messages.find(
      (message: any) => message.role === 'tool'
    );
    expect(toolMessage.content).toContain('<tool_output');
    expect(toolMessage.content).toContain('this model does not read images');
    expect(JSON.stringify(requests[1])).not.toContain('image_url');
    const image = card.locator('img.jp-hdsp-ToolCard-image');
    await expect(image).toHaveAttribute('src', `data:image/png;base64,${png}`);
    expect(
      await image.evaluate((img: HTMLImageElement) => [
        img.naturalWidth,
        img.naturalHeight
      ])
    ).toEqual([8, 6]);
    await screenshot(page, testInfo, 'plot-in-card.png');

    // The export has the picture, not the model's markup.
    await panel.getByRole('button', { name: 'History' }).click();
    const download = page.waitForEvent('download');
    await panel
      .getByRole('list', { name: 'Conversations' })
      .getByRole('button', { name: /^Export "Plot it/ })
      .click();
    const exported = readFileSync(await (await download).path(), 'utf-8');
    expect(exported).toContain(
      `![Output image 1 of run_cell](data:image/png;base64,${png})`
    );
    expect(exported).not.toContain('<tool_output');
    expect(exported).not.toContain('this model does not read images');
    expect(exported).toContain('Plotted.');
  });
});
