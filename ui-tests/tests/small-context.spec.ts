import { expect, test } from '@jupyterlab/galata';

import { failOnConsoleErrors, openPanel, sendInNewChat } from './helpers';

const WINDOW = 4096;

function modelUrl(path: string): string {
  return `http://127.0.0.1:${process.env.HDSP_UI_MODEL_PORT}${path}`;
}

test.describe('hdsp-agent on a small local model', () => {
  failOnConsoleErrors();

  test('a 4k model that refuses longer prompts completes a notebook task in the sidebar', async ({
    page,
    request
  }) => {
    const call = (name: string, args: object) => ({
      tool_calls: [[name, JSON.stringify(args)]] as [string, string][]
    });
    // The model refuses prompts over 4,096 tokens (HTTP 400, as llama.cpp) and reports n_ctx at /props.
    const response = await request.post(modelUrl('/script'), {
      data: {
        max_prompt_tokens: WINDOW,
        replies: [
          call('read_notebook', {}),
          call('run_cell', {
            code: 'for i in range(300):\n    print(i, i * i, i * i * i)'
          }),
          call('read_notebook', { format: 'full' }),
          call('run_cell', {
            code: "for i in range(300):\n    print('row', i, i / 7)"
          }),
          call('read_notebook', { start: 1 }),
          call('run_cell', { code: 'print(sum(range(300)))' }),
          call('insert_cell', {
            cell_type: 'markdown',
            source: '## Result\nThe sum is 44850.'
          }),
          { text: 'Done: the sum is **44850**.' }
        ]
      }
    });
    expect(response.ok()).toBeTruthy();

    await page.notebook.createNew('small.ipynb');
    await page.notebook.setCell(0, 'code', 'n = 300');
    await page.notebook.save();
    const panel = await openPanel(page);
    await sendInNewChat(panel, 'Sum the numbers up to n and note the result');

    // Allow each kernel run and edit as it comes, until the answer is there.
    const answer = panel.locator('.jp-hdsp-Message-assistant').last();
    for (let round = 0; round < 20; round++) {
      if (
        (await answer.count()) &&
        (await answer.textContent())?.includes('44850')
      ) {
        break;
      }
      const allow = panel.getByRole('button', { name: 'Allow once' });
      if (await allow.isVisible()) {
        await allow.click();
      }
      await page.waitForTimeout(1000);
    }
    await expect(answer).toContainText('Done: the sum is 44850.', {
      timeout: 30_000
    });
    await expect(panel.locator('.jp-hdsp-Notice.jp-mod-error')).toHaveCount(0);

    // The user sees that the history was compacted, with the summary the model goes on from.
    const compacted = panel.locator(
      '.jp-hdsp-ContextNotice[data-level="compacted"]'
    );
    await expect(compacted.first()).toContainText('Conversation compacted');
    await expect(
      panel.locator('.jp-hdsp-ContextNotice[data-level="warning"]')
    ).toHaveCount(1);
    // ... and the full history is still in the chat above it: every tool call's card.
    await expect(panel.locator('.jp-hdsp-ToolCard')).toHaveCount(7);

    const seen = await (await request.get(modelUrl('/requests'))).json();
    expect(seen.refused).toBe(0);
    expect(Math.max(...seen.prompt_sizes)).toBeLessThanOrEqual(WINDOW);

    const notebook = page.locator('.jp-NotebookPanel:visible');
    await expect(notebook.locator('.jp-Cell').last()).toContainText(
      'The sum is 44850.'
    );
    await expect(notebook).toContainText('44850');
  });
});
