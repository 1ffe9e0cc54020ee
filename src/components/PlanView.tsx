import { TranslationBundle } from '@jupyterlab/translation';
import * as React from 'react';

import { IPlanItem } from '../plan';

/**
 * The agent's plan as a checklist: done steps ticked, the current one highlighted.
 */
export function PlanView({
  plan,
  trans
}: {
  plan: readonly IPlanItem[];
  trans: TranslationBundle;
}): JSX.Element | null {
  if (plan.length === 0) {
    return null;
  }
  const done = plan.filter(item => item.status === 'done').length;
  return (
    <details className="jp-hdsp-Plan" open={done < plan.length}>
      <summary>{trans.__('Plan: %1 of %2 done', done, plan.length)}</summary>
      <ul className="jp-hdsp-Plan-items" aria-label={trans.__('Plan')}>
        {plan.map((item, index) => (
          <li key={index} className={`jp-hdsp-Plan-item jp-mod-${item.status}`}>
            <input
              type="checkbox"
              readOnly
              tabIndex={-1}
              checked={item.status === 'done'}
              aria-label={item.text}
            />
            <span>{item.text}</span>
            {item.status === 'in_progress' && (
              <span className="jp-hdsp-Plan-now">{trans.__('now')}</span>
            )}
          </li>
        ))}
      </ul>
    </details>
  );
}
