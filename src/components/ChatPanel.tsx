import { IRenderMimeRegistry } from '@jupyterlab/rendermime';
import { TranslationBundle } from '@jupyterlab/translation';
import { ReactWidget } from '@jupyterlab/ui-components';
import { CommandRegistry } from '@lumino/commands';
import * as React from 'react';

import { IToolCallState } from '../chatItems';
import { AgentModel } from '../model';
import { ApprovalScope, ISessionRecord, RuleScope } from '../tokens';
import {
  ApprovalQueue,
  approvalAnnouncement,
  isTypingIn
} from './ApprovalCard';
import { ChatOffer } from './ChatOffer';
import { Composer } from './Composer';
import { ConversationList } from './ConversationList';
import { askConversationTitle, confirmDeleteConversation } from './dialogs';
import { useSignals } from './hooks';
import { McpServersView } from './McpServersView';
import { SkillsView } from './SkillsView';
import { MessageList } from './MessageList';
import { PermissionsView } from './PermissionsView';
import { PlanView } from './PlanView';
import { ReviewBar } from './ReviewBar';
import { SandboxNotice, ServerInfo, ServerStatus } from './ServerStatus';
import { SetupScreen } from './SetupScreen';

export interface IChatViewProps {
  model: AgentModel;
  commands: CommandRegistry;
  rendermime: IRenderMimeRegistry;
  trans: TranslationBundle;
}

/**
 * The sidebar's content: conversations, the chat, approvals and the composer.
 */
export function ChatView(props: IChatViewProps): JSX.Element {
  const { model, trans } = props;
  const active = model.activeSession;
  useSignals([model.stateChanged, active?.changed]);
  // One drawer at a time under the header: the conversations or the MCP servers.
  const [drawer, setDrawer] = React.useState<
    'history' | 'mcp' | 'permissions' | null
  >(null);
  const showHistory = drawer === 'history';
  const toggle = (which: 'history' | 'mcp' | 'permissions') =>
    setDrawer(drawer === which ? null : which);

  const conversation = active?.conversation ?? null;
  const running = conversation?.running ?? false;
  const stop = () => void active?.cancel().catch(() => undefined);
  const title =
    model.sessions.find(session => session.id === active?.id)?.title ?? '';
  // Stable, so the memoized chat items do not re-render for them.
  const onRestore = React.useCallback(
    (turnId: string) => void model.restoreCheckpoint(turnId),
    [model]
  );
  const onRedo = React.useCallback(() => void model.redo(), [model]);
  // Which document a card's call acts on when it is not the one in view: new with the view or the tools.
  const inView = model.context.documentPath;
  const elsewhere = React.useCallback(
    (call: IToolCallState) => model.elsewhere(call),
    [model, inView, model.tools]
  );

  const panel = React.useRef<HTMLDivElement>(null);
  const pending = conversation?.pendingApprovals ?? [];
  // An answer to the waiting card; then the focus goes back to the composer (when it was in the sidebar:
  // never pulled out of a notebook the user went on working in).
  const decide = async (answer: () => Promise<void>) => {
    const focused = document.activeElement;
    const fromPanel =
      !focused ||
      focused === document.body ||
      !!panel.current?.contains(focused);
    try {
      await answer();
    } finally {
      const now = document.activeElement;
      if (
        fromPanel &&
        (!now || now === document.body || panel.current?.contains(now))
      ) {
        panel.current
          ?.querySelector<HTMLTextAreaElement>('.jp-hdsp-Composer-input')
          ?.focus();
      }
    }
  };
  const approve = (callId: string, scope: ApprovalScope, rule?: RuleScope) =>
    decide(() => active!.approve(callId, scope, rule));
  const deny = (callId: string, reason: string) =>
    decide(() => active!.deny(callId, reason));

  return (
    <div
      className={`jp-hdsp-ChatPanel${pending.length > 0 ? ' jp-mod-waiting' : ''}`}
      ref={panel}
      onKeyDownCapture={event => {
        // The waiting card's shortcuts, from anywhere in the sidebar (the composer included): Ctrl+Enter
        // allows once, Ctrl+Shift+Enter for this chat, Ctrl+Backspace declines — unless it would delete a
        // word being typed. Captured before the composer's own Ctrl+Enter (send).
        const first = pending[0];
        const accel = (event.ctrlKey || event.metaKey) && !event.altKey;
        if (!first || !accel || event.nativeEvent.isComposing) {
          return;
        }
        if (event.key === 'Enter') {
          event.preventDefault();
          event.stopPropagation();
          void approve(first.callId, event.shiftKey ? 'session' : 'once');
        } else if (
          event.key === 'Backspace' &&
          !event.shiftKey &&
          !isTypingIn(event.target as Element)
        ) {
          event.preventDefault();
          event.stopPropagation();
          void deny(first.callId, '');
        }
      }}
      onKeyDown={event => {
        // Escape anywhere in the panel stops the turn (inputs that use Escape prevent this).
        if (event.key === 'Escape' && running && !event.defaultPrevented) {
          event.preventDefault();
          stop();
        }
      }}
    >
      <header className="jp-hdsp-ChatPanel-header">
        <h2 className="jp-hdsp-ChatPanel-title">{trans.__('hdsp-agent')}</h2>
        <button
          type="button"
          className="jp-hdsp-HeaderButton"
          aria-pressed={showHistory}
          onClick={() => {
            toggle('history');
            void model.refreshSessions();
          }}
        >
          {trans.__('History')}
        </button>
        <button
          type="button"
          className="jp-hdsp-HeaderButton"
          aria-pressed={drawer === 'mcp'}
          title={trans.__('MCP servers, their tools, and skills')}
          onClick={() => toggle('mcp')}
        >
          {trans.__('MCP')}
        </button>
        <button
          type="button"
          className="jp-hdsp-HeaderButton"
          aria-pressed={drawer === 'permissions'}
          title={trans.__('What you allowed the agent to do without asking')}
          onClick={() => toggle('permissions')}
        >
          {trans.__('Permissions')}
        </button>
        <button
          type="button"
          className="jp-hdsp-HeaderButton"
          onClick={() => {
            setDrawer(null);
            model.newChat();
          }}
        >
          {trans.__('New chat')}
        </button>
      </header>
      {title && <div className="jp-hdsp-ChatPanel-conversation">{title}</div>}
      {model.status !== 'ready' || !model.serverInfo ? (
        <ServerStatus model={model} trans={trans} />
      ) : (
        <>
          {showHistory && (
            <ConversationList
              sessions={model.sessions}
              activeId={active?.id ?? null}
              trans={trans}
              onSelect={id => {
                model.selectSession(id);
                setDrawer(null);
              }}
              onRename={session => void rename(model, session, trans)}
              onDelete={session => void remove(model, session, trans)}
              onExport={session => void download(model, session)}
            />
          )}
          {drawer === 'mcp' && (
            <>
              <McpServersView
                servers={model.mcp}
                showDetails={model.preferences.showToolDetails}
                trans={trans}
              />
              <SkillsView model={model} trans={trans} />
            </>
          )}
          {drawer === 'permissions' && (
            <PermissionsView model={model} trans={trans} />
          )}
          {active && active.connection === 'reconnecting' && (
            <div className="jp-hdsp-Reconnecting" role="status">
              <span className="jp-hdsp-Spinner" aria-hidden="true" />
              {trans.__('Connection lost. Reconnecting…')}
            </div>
          )}
          <SandboxNotice sandbox={model.serverInfo.sandbox} trans={trans} />
          <ChatOffer model={model} trans={trans} />
          {model.models && (!model.models.configured || model.setupOpen) ? (
            <SetupScreen model={model} trans={trans} />
          ) : (
            <>
              <MessageList
                items={conversation?.items ?? []}
                running={running}
                waiting={(conversation?.pendingApprovals.length ?? 0) > 0}
                rendermime={props.rendermime}
                commands={props.commands}
                trans={trans}
                showToolDetails={model.preferences.showToolDetails}
                autoScroll={model.preferences.autoScroll}
                canRestore={turnId => conversation?.canRestore(turnId) ?? false}
                isUndone={turnId => conversation?.isUndone(turnId) ?? false}
                onRestore={onRestore}
                redoKey={conversation?.redoKey ?? null}
                onRedo={onRedo}
                onApprovePlan={(path, mode) => void model.runPlan(path, mode)}
                elsewhere={elsewhere}
              />
              {model.actionError && (
                <div className="jp-hdsp-Error" role="alert">
                  {model.actionError}
                </div>
              )}
              <div className="jp-hdsp-LiveAnnouncement" aria-live="polite">
                {approvalAnnouncement(pending, trans)}
              </div>
              {active && (
                <ApprovalQueue
                  pending={pending}
                  trans={trans}
                  elsewhere={elsewhere}
                  onApprove={approve}
                  onDeny={deny}
                />
              )}
              <PlanView plan={model.plan} trans={trans} />
              <ReviewBar
                model={model}
                trans={trans}
                commands={props.commands}
              />
              <Composer
                model={model}
                trans={trans}
                running={running}
                onStop={stop}
              />
            </>
          )}
          <ServerInfo
            serverInfo={model.serverInfo}
            showDetails={model.preferences.showToolDetails}
            trans={trans}
          />
        </>
      )}
    </div>
  );
}

async function rename(
  model: AgentModel,
  session: ISessionRecord,
  trans: TranslationBundle
): Promise<void> {
  const title = await askConversationTitle(session.title, trans);
  if (title) {
    await model.renameSession(session.id, title);
  }
}

async function remove(
  model: AgentModel,
  session: ISessionRecord,
  trans: TranslationBundle
): Promise<void> {
  if (await confirmDeleteConversation(session.title, trans)) {
    await model.deleteSession(session.id);
  }
}

/**
 * Save the conversation's Markdown export through the browser's download.
 */
async function download(
  model: AgentModel,
  session: ISessionRecord
): Promise<void> {
  const text = await model.exportSession(session.id, 'markdown');
  if (text === null) {
    return;
  }
  const url = URL.createObjectURL(new Blob([text], { type: 'text/markdown' }));
  const link = document.createElement('a');
  link.href = url;
  link.download = `${session.title.replace(/[\\/:*?"<>|]+/g, '_') || 'conversation'}.md`;
  document.body.appendChild(link);
  link.click();
  link.remove();
  URL.revokeObjectURL(url);
}

/**
 * The right-sidebar widget hosting {@link ChatView}.
 */
export class ChatPanel extends ReactWidget {
  constructor(options: IChatViewProps) {
    super();
    this._props = options;
    this.addClass('jp-hdsp-ChatPanel-widget');
  }

  protected render(): JSX.Element {
    return <ChatView {...this._props} />;
  }

  private _props: IChatViewProps;
}
