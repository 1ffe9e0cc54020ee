import { expect, test } from '@jupyterlab/galata';

import {
  loadScript,
  openPanel,
  screenshot,
  sendInNewChat,
  setLanguage
} from './helpers';

test.describe('hdsp-agent in Korean', () => {
  // JupyterLab switched to Korean (Settings > Language), as a user does: the language pack translates
  // JupyterLab, hdsp-agent's own catalog (shipped in its Python package) translates the sidebar.
  // galata's page helpers look for English labels, so this test drives a plain page. The language goes
  // back to English after it, for the test files that run later (in name order).
  test.afterEach(async ({ request }) => {
    await setLanguage(request, null);
  });

  test('shows the sidebar in Korean', async ({
    context,
    request,
    baseURL
  }, testInfo) => {
    await setLanguage(request, 'ko_KR');
    await loadScript(request, [
      {
        tool_calls: [
          ['create_new_file', '{"filepath": "ko.txt", "contents": "x"}']
        ]
      }
    ]);
    const page = await context.newPage();
    await page.goto(`${baseURL}/lab?reset`);
    await expect(
      page.locator('#jp-MainMenu').getByText('파일', { exact: true })
    ).toBeVisible({
      timeout: 60_000
    });
    // A plain page (not galata's): wait, as galata would, until the lab has restored its layout.
    await page.waitForFunction(() => (window as any).jupyterapp?.restored);
    await page.evaluate(() => (window as any).jupyterapp.restored);
    const panel = await openPanel(page);

    await expect(panel.getByRole('button', { name: '새 대화' })).toBeVisible();
    await expect(panel.getByRole('button', { name: '기록' })).toBeVisible();
    const input = panel.getByRole('textbox', { name: '메시지' });
    await expect(input).toHaveAttribute(
      'placeholder',
      /에이전트에게 물어보세요/
    );

    await sendInNewChat(panel, '파일을 만들어 줘', {
      newChat: '새 대화',
      message: '메시지'
    });
    const dialog = panel.getByRole('dialog', {
      name: 'ko.txt 파일을 만들까요?'
    });
    await expect(
      dialog.getByRole('button', { name: '한 번 허용' })
    ).toBeVisible();
    // The reason is the server's ("It changes files in your project"), shown from the same catalog.
    await expect(dialog.locator('.jp-hdsp-ApprovalCard-reasons')).toContainText(
      '프로젝트의 파일을 변경합니다'
    );
    await expect(panel.locator('.jp-hdsp-ToolCard-status')).toHaveText(
      '사용자를 기다리는 중'
    );
    await screenshot(page, testInfo, 'korean.png');

    await panel.getByRole('button', { name: '중지' }).click();
    await expect(
      panel.locator('.jp-hdsp-Notice[data-reason="canceled"]')
    ).toHaveText('중지되었습니다.');
    await page.close();
  });
});
