import { TranslationBundle } from '@jupyterlab/translation';
import { CommandRegistry } from '@lumino/commands';
import * as React from 'react';

import { AgentModel } from '../model';
import { useSignals } from './hooks';

/**
 * Keep all / Undo all for the cells and files the last turn changed (each cell also has its own Keep / Undo
 * in the notebook, each hunk of a file in its editor). A changed file is a button that opens it there.
 */
export function ReviewBar({
  model,
  trans,
  commands
}: {
  model: AgentModel;
  trans: TranslationBundle;
  commands?: CommandRegistry;
}): JSX.Element | null {
  useSignals([model.review.changed, model.stateChanged]);
  const cells = model.review.marks.length;
  const files = model.review.files;
  if (cells === 0 && files.length === 0) {
    return null;
  }
  return (
    <div
      className="jp-hdsp-ReviewBar"
      role="region"
      aria-label={trans.__('Review')}
    >
      {cells > 0 && (
        <span className="jp-hdsp-ReviewBar-label">
          {trans._n(
            'The agent changed %1 cell: review it in the notebook',
            'The agent changed %1 cells: review them in the notebook',
            cells
          )}
        </span>
      )}
      {files.length > 0 && (
        <span className="jp-hdsp-ReviewBar-label">
          {trans._n(
            'The agent changed %1 file: review it in the editor',
            'The agent changed %1 files: review them in the editor',
            files.length
          )}
        </span>
      )}
      {files.length > 0 && commands && (
        <ul className="jp-hdsp-ReviewBar-files">
          {files.map(file => (
            <li key={file.path}>
              <button
                type="button"
                className="jp-hdsp-ReviewBar-file"
                title={trans.__('Open %1 to review the change', file.path)}
                onClick={() =>
                  void commands.execute('docmanager:open', { path: file.path })
                }
              >
                {file.path}
              </button>
            </li>
          ))}
        </ul>
      )}
      <button
        type="button"
        className="jp-mod-styled"
        onClick={() => model.review.clear()}
      >
        {trans.__('Keep all')}
      </button>
      <button
        type="button"
        className="jp-mod-styled jp-mod-warn"
        onClick={() => void model.undoLastTurn()}
      >
        {trans.__('Undo all')}
      </button>
    </div>
  );
}
