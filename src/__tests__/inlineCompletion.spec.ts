import { Widget } from '@lumino/widgets';

import {
  cellsAbove,
  DEFAULT_INLINE_PREFERENCES,
  HdspInlineProvider,
  languageOf,
  wanted
} from '../inlineCompletion';
import { fakeServerSettings, jsonResponse } from './fakeServer';

const request = (text: string) => ({
  text,
  offset: text.length,
  mimeType: 'text/x-ipython'
});
const context = { widget: new Widget(), triggerKind: 1 } as any;

describe('inline completion provider', () => {
  it('names languages from editor MIME types and honours the per-language setting', () => {
    expect(languageOf('text/x-ipython')).toBe('python');
    expect(languageOf('text/x-rsrc')).toBe('r');
    expect(languageOf('text/x-ipythongfm')).toBe('markdown');
    expect(wanted(DEFAULT_INLINE_PREFERENCES, 'python')).toBe(true);
    expect(wanted(DEFAULT_INLINE_PREFERENCES, 'markdown')).toBe(false);
    expect(
      wanted({ ...DEFAULT_INLINE_PREFERENCES, enabled: false }, 'python')
    ).toBe(false);
    expect(cellsAbove(['a', 'b', 'c', 'd'], 2)).toEqual(['a', 'b']);
  });

  it('aborts the request in flight when the next one starts, and sends nothing when turned off', async () => {
    const aborted: boolean[] = [];
    const { settings, fetch } = fakeServerSettings(async req => {
      const body = JSON.parse(await req.text());
      if (body.prefix === 'df.') {
        // The first request hangs until the browser aborts it.
        return new Promise<Response>((_, reject) =>
          req.signal.addEventListener('abort', () => {
            aborted.push(true);
            reject(new DOMException('aborted', 'AbortError'));
          })
        );
      }
      return jsonResponse({ text: 'mean()', mode: 'fim', model: 'm' });
    });
    let preferences = { ...DEFAULT_INLINE_PREFERENCES };
    const provider = new HdspInlineProvider({
      serverSettings: settings,
      preferences: () => preferences
    });
    const stale = provider.fetch(request('df.') as any, context);
    await new Promise(resolve => setTimeout(resolve, 0));
    const fresh = await provider.fetch(request('df.m') as any, context);
    expect(await stale).toEqual({ items: [] });
    expect(aborted).toEqual([true]);
    expect(fresh).toEqual({ items: [{ insertText: 'mean()' }] });
    expect(provider.counts).toEqual({ sent: 2, aborted: 1 });

    preferences = { ...preferences, enabled: false };
    expect(await provider.fetch(request('x.') as any, context)).toEqual({
      items: []
    });
    expect(fetch).toHaveBeenCalledTimes(2);
  });
});
