import { TranslationBundle } from '@jupyterlab/translation';
import * as React from 'react';

import { AgentModel } from '../model';
import { useSignals } from './hooks';

/**
 * Keep all / Undo all for the cells the last turn changed (each cell also has its own Keep / Undo in the
 * notebook).
 */
export function ReviewBar({
  model,
  trans
}: {
  model: AgentModel;
  trans: TranslationBundle;
}): JSX.Element | null {
  useSignals([model.review.changed, model.stateChanged]);
  const count = model.review.marks.length;
  if (count === 0) {
    return null;
  }
  return (
    <div
      className="jp-hdsp-ReviewBar"
      role="region"
      aria-label={trans.__('Review')}
    >
      <span className="jp-hdsp-ReviewBar-label">
        {trans._n(
          'The agent changed %1 cell: review it in the notebook',
          'The agent changed %1 cells: review them in the notebook',
          count
        )}
      </span>
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
