import { IRenderMimeRegistry } from '@jupyterlab/rendermime';
import { TranslationBundle } from '@jupyterlab/translation';
import { CommandRegistry } from '@lumino/commands';
import * as React from 'react';

import { IToolCallState } from '../chatItems';
import { ChatItem, IAssistantItem, ITurnEndItem } from '../conversation';
import { Markdown } from './Markdown';
import { PlanCard, PlanRunMode } from './PlanCard';
import { ToolCard } from './ToolCard';
import { serverText } from '../serverText';

export interface IMessageListProps {
  items: readonly ChatItem[];
  /**
   * Whether a turn is running: a working indicator follows the last item.
   */
  running: boolean;
  /**
   * Whether the running turn waits for the user's approval: then it says so, instead of "Working…".
   */
  waiting?: boolean;
  rendermime: IRenderMimeRegistry;
  commands: CommandRegistry;
  trans: TranslationBundle;
  showToolDetails: boolean;
  autoScroll: boolean;
  /**
   * Whether the checkpoint before a user message's turn can be restored; with `onRestore`, each such
   * message offers "Restore to here".
   */
  canRestore?: (turnId: string) => boolean;
  onRestore?: (turnId: string) => void;
  /** Whether a turn was undone: its message and what the agent did are shown dimmed, labelled "Undone". */
  isUndone?: (turnId: string) => boolean;
  /** The undo notice that can be redone (null: none); with `onRedo`, it offers "Redo". */
  redoKey?: string | null;
  onRedo?: () => void;
  /** "Approve plan" on a plan card. */
  onApprovePlan?: (path: string, mode: PlanRunMode) => void;
  /** The document a tool call acts on when it is not the one in view (its card says so), else null. */
  elsewhere?: (call: IToolCallState) => string | null;
}

/**
 * The conversation: the user's messages, the agent's answers (streamed Markdown, thinking folded
 * away), tool cards, errors and turns that ended early.
 */
export function MessageList(props: IMessageListProps): JSX.Element {
  const { items, trans, autoScroll, running, waiting } = props;
  const scroller = React.useRef<HTMLDivElement>(null);
  const pinned = React.useRef(true);

  // Follow the newest text only while the user has not scrolled up to read.
  React.useLayoutEffect(() => {
    const node = scroller.current;
    if (node && autoScroll && pinned.current) {
      node.scrollTop = node.scrollHeight;
    }
  });

  return (
    <div
      ref={scroller}
      className="jp-hdsp-MessageList"
      role="log"
      aria-live="polite"
      aria-label={trans.__('Conversation')}
      onScroll={() => {
        const node = scroller.current;
        if (node) {
          pinned.current =
            node.scrollHeight - node.scrollTop - node.clientHeight < 40;
        }
      }}
    >
      {items.length === 0 && (
        <div className="jp-hdsp-MessageList-empty">
          {trans.__(
            'Ask about your notebook, or ask the agent to change it. The active notebook is attached to your message.'
          )}
        </div>
      )}
      {undoneTurns(items, props.isUndone).map(([item, undone]) => {
        const element = (
          <Item
            key={item.key}
            item={item}
            rendermime={props.rendermime}
            commands={props.commands}
            trans={trans}
            showToolDetails={props.showToolDetails}
            onRestore={
              item.kind === 'user' && props.canRestore?.(item.turnId)
                ? props.onRestore
                : undefined
            }
            onRedo={item.key === props.redoKey ? props.onRedo : undefined}
            onApprovePlan={running ? undefined : props.onApprovePlan}
            elsewhere={props.elsewhere}
          />
        );
        return undone ? (
          <div key={item.key} className="jp-hdsp-mod-undone">
            {item.kind === 'user' && (
              <span className="jp-hdsp-UndoneLabel">
                {trans.__('Undone: restored to before this message')}
              </span>
            )}
            {element}
          </div>
        ) : (
          element
        );
      })}
      {running &&
        (waiting ? (
          <div className="jp-hdsp-Working jp-mod-waiting" role="status">
            {trans.__('Waiting for you: allow or deny below')}
          </div>
        ) : (
          <div className="jp-hdsp-Working" role="status">
            <span className="jp-hdsp-Spinner" aria-hidden="true" />
            {trans.__('Working…')}
          </div>
        ))}
    </div>
  );
}

/**
 * Each item with whether it belongs to an undone turn: a turn's items run from its user message to the next
 * one; the undo and redo notices themselves stay current.
 */
function undoneTurns(
  items: readonly ChatItem[],
  isUndone?: (turnId: string) => boolean
): [ChatItem, boolean][] {
  let turnUndone = false;
  return items.map(item => {
    if (item.kind === 'user') {
      turnUndone = isUndone?.(item.turnId) ?? false;
    }
    const notice = item.kind === 'undone' || item.kind === 'redone';
    return [item, turnUndone && !notice];
  });
}

interface IItemProps {
  item: ChatItem;
  rendermime: IRenderMimeRegistry;
  commands: CommandRegistry;
  trans: TranslationBundle;
  showToolDetails: boolean;
  /** Set when the message's checkpoint can be restored. */
  onRestore?: (turnId: string) => void;
  /** Set on the undo notice that can be redone. */
  onRedo?: () => void;
  /** "Approve plan" on a plan card (unset while a turn runs). */
  onApprovePlan?: (path: string, mode: PlanRunMode) => void;
  elsewhere?: (call: IToolCallState) => string | null;
}

/**
 * One entry; items are replaced, never mutated, so an unchanged one does not re-render.
 */
const Item = React.memo(function Item(props: IItemProps): JSX.Element | null {
  const { item, trans } = props;
  switch (item.kind) {
    case 'user':
      return (
        <>
          <div className="jp-hdsp-Message jp-hdsp-Message-user">
            <div className="jp-hdsp-Message-text">{item.content}</div>
            {item.context.active_document && (
              <div className="jp-hdsp-Message-context">
                {item.context.active_document.path}
              </div>
            )}
          </div>
          {props.onRestore && (
            <button
              type="button"
              className="jp-hdsp-Checkpoint"
              title={trans.__(
                'Undo this turn and every turn after it: files and cells go back to how they were before this message'
              )}
              onClick={() => props.onRestore?.(item.turnId)}
            >
              {trans.__('Restore to here')}
            </button>
          )}
        </>
      );
    case 'assistant':
      return <AssistantMessage {...props} item={item} />;
    case 'tool':
      return (
        <ToolCard
          call={item.call}
          trans={trans}
          showDetails={props.showToolDetails}
          commands={props.commands}
          elsewhere={props.elsewhere?.(item.call) ?? null}
        />
      );
    case 'error':
      return (
        <div className="jp-hdsp-Notice jp-mod-error" role="alert">
          <strong>{item.code}</strong>
          <div className="jp-hdsp-Notice-message">
            {serverText(trans, item.message, item.texts)}
          </div>
        </div>
      );
    case 'turn-end':
      return <TurnEnd item={item} trans={trans} />;
    case 'plan':
      return (
        <PlanCard
          item={item}
          trans={trans}
          commands={props.commands}
          onApprove={props.onApprovePlan}
        />
      );
    case 'context':
      return (
        <div
          className={`jp-hdsp-Notice jp-hdsp-ContextNotice ${item.level === 'compacted' ? 'jp-mod-compacted' : 'jp-mod-warning'}`}
          data-level={item.level}
          role="status"
        >
          <strong>
            {item.level === 'warning'
              ? trans.__('The context window is nearly full')
              : item.level === 'pruned'
                ? trans.__('Older checkpoints removed')
                : trans.__('Conversation compacted')}
          </strong>
          <div className="jp-hdsp-Notice-message">
            {serverText(trans, item.message, item.texts)}
          </div>
          {item.summary && (
            <details className="jp-hdsp-ContextNotice-summary">
              <summary>{trans.__('Summary the model continues from')}</summary>
              <div className="jp-hdsp-Notice-message">{item.summary}</div>
            </details>
          )}
        </div>
      );
    case 'undone':
      return (
        <div className="jp-hdsp-Notice jp-mod-undone" role="status">
          {item.turns > 1
            ? trans.__(
                'Restored the checkpoint (%1 turns undone). Restored:',
                item.turns
              )
            : trans.__('Undid the last turn. Restored:')}
          <ul className="jp-hdsp-Notice-list">
            {item.restored.map((line, index) => (
              <li key={index}>{serverText(trans, line, item.texts)}</li>
            ))}
          </ul>
          {props.onRedo && (
            <button
              type="button"
              className="jp-mod-styled jp-hdsp-Redo"
              title={trans.__('Put back what this undo took away')}
              onClick={() => props.onRedo?.()}
            >
              {trans.__('Redo')}
            </button>
          )}
        </div>
      );
    case 'redone':
      return (
        <div className="jp-hdsp-Notice jp-mod-redone" role="status">
          {trans.__('Redid. Back again:')}
          <ul className="jp-hdsp-Notice-list">
            {item.restored.map((line, index) => (
              <li key={index}>{serverText(trans, line, item.texts)}</li>
            ))}
          </ul>
        </div>
      );
  }
});

function AssistantMessage(
  props: IItemProps & { item: IAssistantItem }
): JSX.Element | null {
  const { item, trans } = props;
  if (!item.text && !item.reasoning) {
    return null;
  }
  return (
    <div
      className="jp-hdsp-Message jp-hdsp-Message-assistant"
      data-complete={item.complete}
    >
      {item.reasoning && (
        <details className="jp-hdsp-Reasoning">
          <summary>
            {item.complete || item.text
              ? trans.__('Thinking')
              : trans.__('Thinking…')}
          </summary>
          <div className="jp-hdsp-Reasoning-text">{item.reasoning}</div>
        </details>
      )}
      {item.text && (
        <Markdown
          source={item.text}
          rendermime={props.rendermime}
          commands={props.commands}
          trans={trans}
          streaming={!item.complete}
          numbers={item.complete ? item.numbers : undefined}
        />
      )}
    </div>
  );
}

function TurnEnd({
  item,
  trans
}: {
  item: ITurnEndItem;
  trans: TranslationBundle;
}): JSX.Element {
  const labels: Record<ITurnEndItem['reason'], string> = {
    completed: '',
    canceled: trans.__('Stopped.'),
    error: trans.__('The turn failed.'),
    step_limit: trans.__('Stopped at the step limit.'),
    repeated_call: trans.__('Stopped: the agent repeated the same call.'),
    interrupted: trans.__('Interrupted (the server restarted).')
  };
  return (
    <div
      className={`jp-hdsp-Notice ${item.reason === 'error' ? 'jp-mod-error' : 'jp-mod-warning'}`}
      data-reason={item.reason}
      role="status"
    >
      {labels[item.reason]}
      {item.message && item.reason !== 'canceled' && (
        <div className="jp-hdsp-Notice-message">
          {serverText(trans, item.message, item.texts)}
        </div>
      )}
    </div>
  );
}
