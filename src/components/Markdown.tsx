import { Clipboard } from '@jupyterlab/apputils';
import { IRenderMimeRegistry, renderMarkdown } from '@jupyterlab/rendermime';
import { TranslationBundle } from '@jupyterlab/translation';
import { CommandRegistry } from '@lumino/commands';
import * as React from 'react';

import {
  disableDnsPrefetch,
  withoutRemoteLoads,
  withoutTexStyles
} from '../remoteContent';
import type { INumberMark } from '../events';
import { markNumbers } from '../numberMarks';
import { CommandIDs } from '../tokens';

export interface IMarkdownProps {
  source: string;
  rendermime: IRenderMimeRegistry;
  commands: CommandRegistry;
  trans: TranslationBundle;
  /**
   * While the text still streams in, math is typeset only once it is complete.
   */
  streaming?: boolean;
  /**
   * The answer's numbers tied to the turn's outputs (`answer.numbers`), marked in the rendered text.
   */
  numbers?: readonly INumberMark[];
}

/**
 * Markdown rendered by JupyterLab's rendermime (sanitized, nothing loaded from other origins, code
 * highlighted, math typeset), with
 * copy / insert / run buttons on every code block.
 */
export function Markdown(props: IMarkdownProps): JSX.Element {
  const host = React.useRef<HTMLDivElement>(null);
  const latest = React.useRef(props);
  latest.current = props;
  const state = React.useRef({ rendering: false, again: false });

  React.useEffect(() => {
    const render = async () => {
      if (state.current.rendering) {
        state.current.again = true; // render once more with the newest text when this one ends
        return;
      }
      state.current.rendering = true;
      // Before any link of the model's text is in the page (see remoteContent.ts).
      disableDnsPrefetch();
      try {
        do {
          state.current.again = false;
          const node = host.current;
          if (!node) {
            return;
          }
          const { source, rendermime, streaming, trans } = latest.current;
          await renderMarkdown({
            host: node,
            source,
            // The model's text is untrusted: sanitized, no scripts, and nothing fetched from another
            // origin without a click (see remoteContent.ts).
            trusted: false,
            sanitizer: withoutRemoteLoads(rendermime.sanitizer, {
              image: url => trans.__('External image, not loaded: %1', url),
              media: url => trans.__('External media, not loaded: %1', url)
            }),
            resolver: rendermime.resolver,
            linkHandler: rendermime.linkHandler,
            shouldTypeset: !streaming,
            latexTypesetter: rendermime.latexTypesetter
              ? withoutTexStyles(rendermime.latexTypesetter)
              : null,
            markdownParser: rendermime.markdownParser
          });
          addCodeActions(node, latest.current);
          if (latest.current.numbers?.length) {
            markNumbers(node, latest.current.numbers, trans);
          }
        } while (state.current.again);
      } catch (reason) {
        console.warn('hdsp-agent: could not render Markdown', reason);
      } finally {
        state.current.rendering = false;
      }
    };
    void render();
  }, [props.source, props.streaming, props.numbers]);

  return <div ref={host} className="jp-hdsp-Markdown jp-RenderedHTMLCommon" />;
}

/**
 * A toolbar over each `<pre>` block: copy, insert into the notebook, run in the notebook.
 */
function addCodeActions(host: HTMLElement, props: IMarkdownProps): void {
  const { commands, trans } = props;
  host.querySelectorAll('pre').forEach(pre => {
    if (pre.parentElement?.classList.contains('jp-hdsp-CodeBlock')) {
      return;
    }
    const code = (pre.textContent ?? '').replace(/\n$/, '');
    const wrapper = document.createElement('div');
    wrapper.className = 'jp-hdsp-CodeBlock';
    const bar = document.createElement('div');
    bar.className = 'jp-hdsp-CodeBlock-actions';
    bar.append(
      actionButton(trans.__('Copy'), trans.__('Copy the code'), () => {
        Clipboard.copyToSystem(code);
      }),
      actionButton(
        trans.__('Insert'),
        trans.__('Insert the code in a new cell below the active cell'),
        () => void commands.execute(CommandIDs.insertCode, { code })
      ),
      actionButton(
        trans.__('Run'),
        trans.__('Insert the code below the active cell and run it'),
        () => void commands.execute(CommandIDs.runCode, { code })
      )
    );
    pre.replaceWith(wrapper);
    wrapper.append(bar, pre);
  });
}

function actionButton(
  label: string,
  title: string,
  onClick: () => void
): HTMLButtonElement {
  const button = document.createElement('button');
  button.type = 'button';
  button.className = 'jp-hdsp-CodeBlock-action';
  button.textContent = label;
  button.title = title;
  button.addEventListener('click', onClick);
  return button;
}
