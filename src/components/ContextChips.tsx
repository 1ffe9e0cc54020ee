import { PathExt } from '@jupyterlab/coreutils';
import { TranslationBundle } from '@jupyterlab/translation';
import * as React from 'react';

import { ContextState } from '../contextState';
import { useSignals } from './hooks';

/**
 * The context attached to the next message, one removable chip per part.
 */
export function ContextChips({
  context,
  trans
}: {
  context: ContextState;
  trans: TranslationBundle;
}): JSX.Element | null {
  useSignals([context.changed]);
  const path = context.documentPath;
  if (!path || !context.documentAttached) {
    return null;
  }
  const cells = context.cells;
  return (
    <div className="jp-hdsp-ContextChips" aria-label={trans.__('Context')}>
      <Chip
        label={PathExt.basename(path)}
        title={trans.__('The agent sees %1 and its tools work on it', path)}
        removeLabel={trans.__('Remove %1 from the context', path)}
        onRemove={() => context.removeDocument()}
      />
      {context.cellsAttached && (
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
