import { CommandRegistry } from '@lumino/commands';
import { TranslationBundle } from '@jupyterlab/translation';
import * as React from 'react';

import { IPlanCardItem } from '../chatItems';

export type PlanRunMode = 'accept-edits' | 'default';

/**
 * Plan mode's result: the plan as a checklist, saved to a file, with "Approve plan" (run it in the chosen
 * mode: the server reads the file as it is then) and "Edit" (the file in JupyterLab's editor).
 */
export function PlanCard({
  item,
  trans,
  commands,
  onApprove
}: {
  item: IPlanCardItem;
  trans: TranslationBundle;
  commands: CommandRegistry;
  onApprove?: (path: string, mode: PlanRunMode) => void;
}): JSX.Element {
  const [mode, setMode] = React.useState<PlanRunMode>('accept-edits');
  return (
    <div
      className="jp-hdsp-PlanCard"
      role="group"
      aria-label={trans.__('Plan')}
    >
      <strong>
        {item.approved ? trans.__('Plan approved') : trans.__('Plan')}
      </strong>
      <ul className="jp-hdsp-PlanCard-items">
        {item.items.map((text, index) => (
          <li key={index}>
            <input type="checkbox" readOnly tabIndex={-1} checked={false} />
            <span>{text}</span>
          </li>
        ))}
      </ul>
      <div className="jp-hdsp-PlanCard-path">{item.path}</div>
      {!item.approved && onApprove && (
        <div className="jp-hdsp-PlanCard-actions">
          <select
            className="jp-hdsp-Select"
            aria-label={trans.__('Run the plan in')}
            value={mode}
            onChange={event => setMode(event.target.value as PlanRunMode)}
          >
            <option value="accept-edits">{trans.__('Accept edits')}</option>
            <option value="default">{trans.__('Ask before changes')}</option>
          </select>
          <button
            type="button"
            className="jp-mod-styled jp-mod-accept"
            onClick={() => onApprove(item.path, mode)}
          >
            {trans.__('Approve plan')}
          </button>
          <button
            type="button"
            className="jp-mod-styled"
            title={trans.__(
              'Open the plan file; the file as you save it is what runs'
            )}
            onClick={() =>
              void commands.execute('docmanager:open', {
                path: item.path,
                factory: 'Editor'
              })
            }
          >
            {trans.__('Edit')}
          </button>
        </div>
      )}
    </div>
  );
}
