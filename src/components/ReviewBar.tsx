import { TranslationBundle } from '@jupyterlab/translation';
import { CommandRegistry } from '@lumino/commands';
import * as React from 'react';

import type { IVariableChangeInfo } from '../events';
import { AgentModel } from '../model';
import { useSignals } from './hooks';

/**
 * Keep all / Undo all for the cells still marked (from any turn) and the files the last turn changed
 * (each cell also has its own Keep / Undo in the notebook, each hunk of a file in its editor). A changed
 * file is a button that opens it there.
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
  const [, refresh] = React.useReducer((n: number) => n + 1, 0);
  const [open, setOpen] = React.useState(false);
  const cells = model.review.marks.length;
  const files = model.review.files;
  const conversation = model.activeSession?.conversation ?? null;
  const kernel = Object.entries(conversation?.kernelChanges ?? {});
  // Mid-turn the agent is still changing these: undoing under it fails (the server refuses), so wait.
  const running = conversation?.running ?? false;
  if (cells === 0 && files.length === 0 && kernel.length === 0) {
    return null;
  }
  const variables = kernel.reduce(
    (sum, [, changes]) => sum + changes.length,
    0
  );
  const counts = [
    cells > 0 ? trans._n('%1 cell', '%1 cells', cells) : null,
    files.length > 0 ? trans._n('%1 file', '%1 files', files.length) : null,
    variables > 0 ? trans._n('%1 variable', '%1 variables', variables) : null
  ].filter((part): part is string => part !== null);
  const detailsId = 'jp-hdsp-ReviewBar-details';
  return (
    <div
      className="jp-hdsp-ReviewBar"
      role="region"
      aria-label={trans.__('Review')}
    >
      {/* One line (what changed, Keep all, Undo all) until opened: the chat keeps its room. */}
      <div className="jp-hdsp-ReviewBar-line">
        <button
          type="button"
          className="jp-hdsp-ReviewBar-toggle"
          aria-expanded={open}
          aria-controls={detailsId}
          title={trans.__('Show what the agent changed')}
          onClick={() => setOpen(!open)}
        >
          {trans.__('Changed: %1', counts.join(trans.__(', ')))}
        </button>
        <button
          type="button"
          className="jp-mod-styled"
          onClick={() => {
            void model.keepAllCells();
            model.review.clear();
            conversation?.dismissKernelChanges();
            refresh();
          }}
        >
          {trans.__('Keep all')}
        </button>
        <button
          type="button"
          className="jp-mod-styled jp-mod-warn"
          disabled={running}
          title={
            running
              ? trans.__('Wait for the agent to finish to undo')
              : undefined
          }
          onClick={() => void model.undoAll()}
        >
          {trans.__('Undo all')}
        </button>
      </div>
      <div className="jp-hdsp-ReviewBar-details" id={detailsId} hidden={!open}>
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
                    void commands.execute('docmanager:open', {
                      path: file.path
                    })
                  }
                >
                  {file.path}
                </button>
              </li>
            ))}
          </ul>
        )}
        {kernel.length > 0 && (
          <KernelChanges notebooks={kernel} trans={trans} />
        )}
      </div>
    </div>
  );
}

/**
 * The kernel variables the last turn's runs created, changed or deleted, per notebook: name, type,
 * shape or length and a short preview (a summary from the kernel, never the value itself).
 */
function KernelChanges({
  notebooks,
  trans
}: {
  notebooks: [string, IVariableChangeInfo[]][];
  trans: TranslationBundle;
}): JSX.Element {
  const labels: Record<IVariableChangeInfo['change'], string> = {
    created: trans.__('created'),
    changed: trans.__('changed'),
    deleted: trans.__('deleted')
  };
  return (
    <div className="jp-hdsp-KernelChanges">
      {notebooks.map(([path, changes]) => (
        <div key={path}>
          <span className="jp-hdsp-ReviewBar-label">
            {trans._n(
              'The agent changed %1 variable in the kernel of %2',
              'The agent changed %1 variables in the kernel of %2',
              changes.length,
              path
            )}
          </span>
          <ul className="jp-hdsp-KernelChanges-list">
            {changes.map(change => (
              <li
                key={change.name}
                className="jp-hdsp-KernelChange"
                data-change={change.change}
              >
                <code>{change.name}</code>{' '}
                <span className="jp-hdsp-KernelChange-kind">
                  {labels[change.change]}
                </span>{' '}
                <span className="jp-hdsp-KernelChange-type">
                  {describe(change)}
                </span>
                {change.preview && (
                  <span className="jp-hdsp-KernelChange-preview">
                    {' = '}
                    {change.preview}
                  </span>
                )}
              </li>
            ))}
          </ul>
        </div>
      ))}
    </div>
  );
}

function describe(change: IVariableChangeInfo): string {
  if (change.shape) {
    return `${change.type} (${change.shape.join(' × ')})`;
  }
  if (change.length !== null && change.length !== undefined) {
    return `${change.type} [${change.length}]`;
  }
  return change.type;
}
