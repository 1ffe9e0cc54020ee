import { TranslationBundle } from '@jupyterlab/translation';
import * as React from 'react';

import { AgentModel } from '../model';
import { useSignals } from './hooks';

/**
 * Tokens used in the conversation, and how full the model's window was at the last step ("~" when the model's
 * server did not report usage and the figures are estimated).
 */
export function UsageMeter({
  model,
  trans
}: {
  model: AgentModel;
  trans: TranslationBundle;
}): JSX.Element | null {
  const session = model.activeSession;
  useSignals([model.stateChanged, ...(session ? [session.changed] : [])]);
  const usage = session?.conversation.usage;
  if (!usage || usage.tokens === 0) {
    return null;
  }
  const about = usage.estimated ? '~' : '';
  const tokens = `${about}${formatTokens(usage.tokens)}`;
  const share =
    usage.contextWindow && usage.lastPromptTokens
      ? Math.min(
          100,
          Math.round((100 * usage.lastPromptTokens) / usage.contextWindow)
        )
      : null;
  return (
    <div
      className={`jp-hdsp-Usage${share !== null && share >= 80 ? ' jp-mod-warn' : ''}`}
      role="status"
      title={trans.__(
        'Tokens sent and received in this conversation, and how much of the model’s context window the last request used'
      )}
    >
      {share === null
        ? trans.__('%1 tokens', tokens)
        : trans.__('%1 tokens · window %2% full', tokens, share)}
    </div>
  );
}

export function formatTokens(count: number): string {
  return count >= 1000
    ? `${(count / 1000).toFixed(count >= 100_000 ? 0 : 1)}k`
    : String(count);
}
