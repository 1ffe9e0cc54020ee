import {
  RenderMimeRegistry,
  standardRendererFactories
} from '@jupyterlab/rendermime';
import { CommandRegistry } from '@lumino/commands';

import { CommandIDs } from '../tokens';

/**
 * A tiny Markdown parser for tests: fenced code blocks, **bold**, paragraphs. The app uses
 * JupyterLab's own parser; what the tests check is what the sidebar does around it.
 */
const markdownParser = {
  render: async (source: string) =>
    source
      .split(/```(?:\w*)\n([\s\S]*?)```/g)
      .map((part, index) =>
        index % 2 === 1
          ? `<pre><code>${escape(part)}</code></pre>`
          : part.trim()
            ? // Raw HTML passes through, as in real Markdown: the sanitizer must catch it.
              `<p>${part.trim().replace(/\*\*(.+?)\*\*/g, '<strong>$1</strong>')}</p>`
            : ''
      )
      .join('')
};

function escape(text: string): string {
  return text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;');
}

export function makeRendermime(): RenderMimeRegistry {
  return new RenderMimeRegistry({
    initialFactories: standardRendererFactories,
    markdownParser
  });
}

/**
 * A command registry with the code commands the chat's buttons call, recording their arguments.
 */
export function makeCommands(): {
  commands: CommandRegistry;
  executed: [string, any][];
} {
  const commands = new CommandRegistry();
  const executed: [string, any][] = [];
  for (const id of [CommandIDs.insertCode, CommandIDs.runCode]) {
    commands.addCommand(id, {
      label: id,
      execute: args => {
        executed.push([id, args]);
      }
    });
  }
  return { commands, executed };
}
