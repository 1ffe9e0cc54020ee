import { TranslationBundle } from '@jupyterlab/translation';
import { CommandRegistry } from '@lumino/commands';
import * as React from 'react';

import { CommandIDs } from '../tokens';

/**
 * One cell whose replay differs, as `hdsp_agent/tools/jupyter/replay/report.py` describes it.
 */
export interface IReplayFinding {
  index: number;
  cell_id: string;
  cause: string;
  cause_title: string;
  explanation: string;
  what: string;
  saved: string;
  replayed: string;
  related_index?: number | null;
}

/**
 * A replay's report (`details.replay` of check_reproducibility).
 */
export interface IReplayReport {
  path: string;
  kernel_name: string;
  seconds: number;
  cells_compared: number;
  cells_same: number;
  stopped: string | null;
  reproducible: boolean;
  findings: IReplayFinding[];
}

export function isReplayReport(value: unknown): value is IReplayReport {
  return (
    typeof value === 'object' &&
    value !== null &&
    Array.isArray((value as IReplayReport).findings)
  );
}

/**
 * The replay card: whether the notebook reproduces from a clean start, and each differing cell with its
 * cause, a button that shows the cell in the notebook.
 */
export function ReplayReport({
  report,
  trans,
  commands
}: {
  report: IReplayReport;
  trans: TranslationBundle;
  commands?: CommandRegistry;
}): JSX.Element {
  const causes: Record<string, string> = {
    used_before_defined: trans.__(
      'a name used before the cell that defines it'
    ),
    deleted_or_edited_cell: trans.__(
      'a variable from a deleted or edited cell'
    ),
    out_of_order: trans.__('out-of-order execution'),
    file_read_before_written: trans.__(
      'a file read before the cell that writes it'
    ),
    unseeded_random: trans.__('unseeded randomness'),
    environment: trans.__('an environment dependence'),
    follows_from: trans.__('follows from an earlier difference')
  };
  const reveal = (index: number) =>
    void commands?.execute(CommandIDs.revealCell, {
      path: report.path,
      index
    });
  return (
    <div
      className={`jp-hdsp-Replay ${report.reproducible ? 'jp-mod-reproducible' : 'jp-mod-differs'}`}
      role="group"
      aria-label={trans.__('Replay in a fresh kernel')}
    >
      <div className="jp-hdsp-Replay-summary">
        {report.reproducible
          ? trans.__(
              'Reproducible: all %1 run cells give their saved outputs in a fresh kernel (%2 s).',
              report.cells_compared,
              report.seconds.toFixed(1)
            )
          : trans.__(
              '%1 of %2 run cells reproduce in a fresh kernel (%3 s).',
              report.cells_same,
              report.cells_compared,
              report.seconds.toFixed(1)
            )}
        {report.stopped && (
          <span className="jp-hdsp-Replay-stopped">
            {' '}
            {trans.__('Stopped early: %1.', report.stopped)}
          </span>
        )}
      </div>
      {report.findings.length > 0 && (
        <ul className="jp-hdsp-Replay-findings">
          {report.findings.map(finding => (
            <li
              key={finding.index}
              className="jp-hdsp-Replay-finding"
              data-cause={finding.cause}
              data-cell-index={finding.index}
            >
              <button
                type="button"
                className="jp-hdsp-Replay-cell"
                title={trans.__(
                  'Show cell %1 in the notebook',
                  finding.index + 1
                )}
                onClick={() => reveal(finding.index)}
              >
                {trans.__('Cell %1', finding.index + 1)}
              </button>{' '}
              <strong>{causes[finding.cause] ?? finding.cause_title}</strong>
              <div className="jp-hdsp-Replay-explanation">
                {finding.explanation}
              </div>
              <div className="jp-hdsp-Replay-outputs">
                {trans.__('saved: %1', finding.saved)}
                <br />
                {trans.__('replay: %1', finding.replayed)}
              </div>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
