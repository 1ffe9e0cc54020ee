import { TranslationBundle } from '@jupyterlab/translation';
import * as React from 'react';

import { SlashOutcome } from '../slashRunner';

/**
 * What a slash command answered in the composer: `/context`'s breakdown (tokens by part, summing to the
 * request's size) or a short note.
 */
export function ContextReport({
  outcome,
  trans,
  onClose
}: {
  outcome: SlashOutcome;
  trans: TranslationBundle;
  onClose: () => void;
}): JSX.Element | null {
  if (outcome.kind === 'note') {
    return (
      <div className="jp-hdsp-SlashNote" role="status">
        {outcome.message}
        <button type="button" className="jp-mod-styled" onClick={onClose}>
          {trans.__('Close')}
        </button>
      </div>
    );
  }
  if (outcome.kind !== 'context') {
    return null;
  }
  const { parts, total, context_window } = outcome.reply;
  const labels: [string, string][] = [
    ['system', trans.__('System prompt')],
    ['rules', trans.__('Rules')],
    ['tools', trans.__('Tools')],
    ['history', trans.__('History')],
    ['tool_results', trans.__('Tool results')]
  ];
  return (
    <div
      className="jp-hdsp-ContextReport"
      role="region"
      aria-label={trans.__('Context')}
    >
      <table>
        <tbody>
          {labels.map(([part, label]) => (
            <tr key={part} data-part={part}>
              <th scope="row">{label}</th>
              <td>{parts[part] ?? 0}</td>
            </tr>
          ))}
          <tr data-part="total">
            <th scope="row">{trans.__('Next request')}</th>
            <td>{total}</td>
          </tr>
        </tbody>
      </table>
      <div className="jp-hdsp-ContextReport-window">
        {trans.__(
          'about %1 of %2 tokens of the context window',
          total,
          context_window
        )}
      </div>
      <button type="button" className="jp-mod-styled" onClick={onClose}>
        {trans.__('Close')}
      </button>
    </div>
  );
}
