import { TranslationBundle } from '@jupyterlab/translation';
import * as React from 'react';

import { Conversation } from '../conversation';
import { AgentModel } from '../model';
import { IModelInfo } from '../tokens';
import { useSignals } from './hooks';

/**
 * Tokens used in the conversation, and how full the model's window was at the last step ("~" when the model's
 * server did not report usage and the figures are estimated). A click opens the breakdown per turn.
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
  const [open, setOpen] = React.useState(false);
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
  const models = model.models?.models ?? [];
  const info =
    models.find(entry => entry.name === model.selectedModel) ?? models[0];
  return (
    <div className="jp-hdsp-UsageBox">
      <button
        type="button"
        className={`jp-hdsp-Usage${share !== null && share >= 80 ? ' jp-mod-warn' : ''}`}
        aria-expanded={open}
        onClick={() => setOpen(!open)}
        title={trans.__(
          'Tokens sent and received in this conversation, and how much of the model’s context window the last request used. Click for the breakdown per turn.'
        )}
      >
        {share === null
          ? trans.__('%1 tokens', tokens)
          : trans.__('%1 tokens · window %2% full', tokens, share)}
      </button>
      {open && session && (
        <UsageBreakdown
          turns={session.conversation.turnUsage}
          info={info}
          trans={trans}
        />
      )}
    </div>
  );
}

/**
 * Each turn's tokens by part — system prompt, tools, history, tool results, completion — and what they cost
 * when the model's price is configured.
 */
export function UsageBreakdown({
  turns,
  info,
  trans
}: {
  turns: Conversation.ITurnUsage[];
  info?: IModelInfo;
  trans: TranslationBundle;
}): JSX.Element {
  const priceIn = info?.price_per_mtok_in ?? 0;
  const priceOut = info?.price_per_mtok_out ?? 0;
  const priced = priceIn > 0 || priceOut > 0;
  const cost = (turn: Conversation.ITurnUsage) =>
    (turn.prompt * priceIn + turn.completion * priceOut) / 1_000_000;
  return (
    <table
      className="jp-hdsp-UsageBreakdown"
      aria-label={trans.__('Tokens per turn')}
    >
      <thead>
        <tr>
          <th>{trans.__('Turn')}</th>
          <th>{trans.__('System prompt')}</th>
          <th>{trans.__('Tools')}</th>
          <th>{trans.__('History')}</th>
          <th>{trans.__('Tool results')}</th>
          <th>{trans.__('Completion')}</th>
          <th>{trans.__('Total')}</th>
          {priced && <th>{trans.__('Cost')}</th>}
        </tr>
      </thead>
      <tbody>
        {turns.map((turn, index) => (
          <tr key={turn.turnId || index} data-turn={index + 1}>
            <td>
              {turn.estimated ? '~' : ''}
              {index + 1}
            </td>
            <td>{turn.system}</td>
            <td>{turn.tools}</td>
            <td>{turn.history}</td>
            <td>{turn.toolResults}</td>
            <td>{turn.completion}</td>
            <td>{turn.prompt + turn.completion}</td>
            {priced && <td>${cost(turn).toFixed(4)}</td>}
          </tr>
        ))}
      </tbody>
    </table>
  );
}

export function formatTokens(count: number): string {
  return count >= 1000
    ? `${(count / 1000).toFixed(count >= 100_000 ? 0 : 1)}k`
    : String(count);
}
