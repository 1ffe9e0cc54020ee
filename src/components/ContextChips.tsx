import { PathExt } from '@jupyterlab/coreutils';
import { TranslationBundle } from '@jupyterlab/translation';
import * as React from 'react';

import { ContextState, mentionKey } from '../contextState';
import { IInstruction } from '../tokens';
import { useSignals } from './hooks';

/**
 * The context attached to the next message, one removable chip per part, and the project instructions that
 * apply to it (AGENTS.md, rules), so the user knows what else the agent is told.
 */
export function ContextChips({
  context,
  instructions = [],
  trans
}: {
  context: ContextState;
  instructions?: readonly IInstruction[];
  trans: TranslationBundle;
}): JSX.Element | null {
  useSignals([context.changed]);
  const path = context.documentAttached ? context.documentPath : null;
  const mentions = context.mentions;
  if (!path && instructions.length === 0 && mentions.length === 0) {
    return null;
  }
  const cells = context.cells;
  return (
    <div className="jp-hdsp-ContextChips" aria-label={trans.__('Context')}>
      {instructions.map(item => (
        <span
          key={item.path}
          className="jp-hdsp-Chip jp-hdsp-Chip-instructions"
          title={
            item.kind === 'instructions'
              ? trans.__(
                  'Project instructions from %1 apply to every message',
                  item.path
                )
              : trans.__(
                  'The project rule %1 applies to this message',
                  item.path
                )
          }
        >
          <span className="jp-hdsp-Chip-label">{item.name}</span>
        </span>
      ))}
      {mentions.map(mention => {
        const label =
          mention.kind === 'file'
            ? `@${PathExt.basename(mention.path)}`
            : mention.kind === 'cell'
              ? `@cell${mention.index + 1}`
              : `@${mention.name}`;
        return (
          <Chip
            key={mentionKey(mention)}
            label={label}
            title={trans.__('Mentioned: sent with the message')}
            removeLabel={trans.__('Remove %1 from the context', label)}
            onRemove={() => context.removeMention(mention)}
          />
        );
      })}
      {path && (
        <Chip
          label={PathExt.basename(path)}
          title={trans.__('The agent sees %1 and its tools work on it', path)}
          removeLabel={trans.__('Remove %1 from the context', path)}
          onRemove={() => context.removeDocument()}
        />
      )}
      {path && context.cellsAttached && (
        <Chip
          label={
            cells.length === 1
              ? trans.__('Cell %1', cells[0].index + 1)
              : trans._n('%1 cell', '%1 cells', cells.length)
          }
          title={trans.__('The selected cells are sent with the message')}
          removeLabel={trans.__('Remove the selected cells from the context')}
          onRemove={() => context.removeCells()}
        />
      )}
    </div>
  );
}

function Chip(props: {
  label: string;
  title: string;
  removeLabel: string;
  onRemove: () => void;
}): JSX.Element {
  return (
    <span className="jp-hdsp-Chip" title={props.title}>
      <span className="jp-hdsp-Chip-label">{props.label}</span>
      <button
        type="button"
        className="jp-hdsp-Chip-remove"
        aria-label={props.removeLabel}
        title={props.removeLabel}
        onClick={props.onRemove}
      >
        ×
      </button>
    </span>
  );
}
