/**
 * Numbers tied to outputs, in the rendered answer: each number the server checked (`answer.numbers`) is
 * wrapped where it appears in the text — linked to the tool call whose output shows it (hover: the output
 * line; click: the call's card, opened and scrolled to), or marked "not found in any output".
 *
 * The marks carry offsets in the Markdown source; the rendered text no longer has them (emphasis, links,
 * entities), so the numbers are found again in the rendered text nodes in order, each after the previous
 * one. Code blocks are skipped, as the server skips them.
 */
import { TranslationBundle } from '@jupyterlab/translation';

import type { INumberMark } from './events';

const MARK_CLASS = 'jp-hdsp-Number';

export function markNumbers(
  host: HTMLElement,
  marks: readonly INumberMark[],
  trans: TranslationBundle
): void {
  if (host.querySelector(`.${MARK_CLASS}`)) {
    return; // already marked (a render of the same text)
  }
  const walker = document.createTreeWalker(host, NodeFilter.SHOW_TEXT, {
    acceptNode: node =>
      node.parentElement?.closest('pre, .jp-hdsp-CodeBlock')
        ? NodeFilter.FILTER_REJECT
        : NodeFilter.FILTER_ACCEPT
  });
  let node = walker.nextNode() as Text | null;
  let from = 0;
  for (const mark of marks) {
    while (node) {
      const at = findNumber(node.data, mark.text, from);
      if (at < 0) {
        node = walker.nextNode() as Text | null;
        from = 0;
        continue;
      }
      const rest = node.splitText(at);
      const after = rest.splitText(mark.text.length);
      rest.replaceWith(numberElement(mark, trans));
      node = after;
      from = 0;
      break;
    }
  }
}

/**
 * Where `text` stands as a whole number in `data` (not inside a longer number or a word), from `from`.
 */
function findNumber(data: string, text: string, from: number): number {
  let at = data.indexOf(text, from);
  while (at >= 0) {
    const before = data[at - 1] ?? ' ';
    const after = data[at + text.length] ?? ' ';
    if (!/[\w.]/.test(before) && !/\d/.test(after)) {
      return at;
    }
    at = data.indexOf(text, at + 1);
  }
  return -1;
}

function numberElement(
  mark: INumberMark,
  trans: TranslationBundle
): HTMLElement {
  if (!mark.found || !mark.source) {
    const span = document.createElement('span');
    span.className = `${MARK_CLASS} jp-mod-unfound`;
    span.textContent = mark.text;
    span.title = trans.__('Not found in any output of this turn');
    span.dataset.found = 'false';
    return span;
  }
  const source = mark.source;
  const button = document.createElement('button');
  button.type = 'button';
  button.className = `${MARK_CLASS} jp-mod-found`;
  button.textContent = mark.text;
  button.dataset.found = 'true';
  button.title = source.call_id
    ? trans.__(
        'From %1, line %2: %3',
        source.tool ?? '',
        source.line_number,
        source.line
      )
    : trans.__('From your message: %1', source.line);
  if (source.call_id) {
    button.dataset.callId = source.call_id;
    button.addEventListener('click', () =>
      revealOutput(button, source.call_id!, source.line)
    );
  }
  return button;
}

/**
 * Scroll the chat to the tool call's card, open its result and highlight the line the number came from.
 */
function revealOutput(from: HTMLElement, callId: string, line: string): void {
  const chat = from.closest('.jp-hdsp-MessageList') ?? document;
  const card = chat.querySelector<HTMLElement>(
    `.jp-hdsp-ToolCard[data-call-id="${CSS.escape(callId)}"]`
  );
  if (!card) {
    return;
  }
  const header = card.querySelector<HTMLButtonElement>(
    '.jp-hdsp-ToolCard-header'
  );
  if (header?.getAttribute('aria-expanded') === 'false') {
    header.click();
  }
  // The card's className is React's: opening it re-renders and drops a class added before, so the
  // highlight is added again once that render is done.
  const highlight = (): void => card.classList.add('jp-mod-highlighted');
  highlight();
  window.setTimeout(() => card.classList.remove('jp-mod-highlighted'), 3000);
  requestAnimationFrame(() => {
    highlight();
    const result = Array.from(
      card.querySelectorAll<HTMLElement>('.jp-hdsp-ToolCard-pre')
    ).find(pre => (pre.textContent ?? '').includes(line));
    (result ?? card).scrollIntoView({ block: 'center' });
  });
}
