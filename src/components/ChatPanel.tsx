import { IRenderMimeRegistry } from '@jupyterlab/rendermime';
import { TranslationBundle } from '@jupyterlab/translation';
import { ReactWidget } from '@jupyterlab/ui-components';
import { CommandRegistry } from '@lumino/commands';
import * as React from 'react';

import { AgentModel } from '../model';
import { ISessionRecord } from '../tokens';
import { ApprovalQueue } from './ApprovalCard';
import { Composer } from './Composer';
import { ConversationList } from './ConversationList';
import { askConversationTitle, confirmDeleteConversation } from './dialogs';
import { useSignals } from './hooks';
import { McpServersView } from './McpServersView';
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

  return (
    <div
      className="jp-hdsp-ChatPanel"
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
          title={trans.__('MCP servers and their tools')}
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
            <McpServersView
              servers={model.mcp}
              showDetails={model.preferences.showToolDetails}
              trans={trans}
            />
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
              />
              {model.actionError && (
                <div className="jp-hdsp-Error" role="alert">
                  {model.actionError}
                </div>
              )}
              {active && (
                <ApprovalQueue
                  pending={conversation?.pendingApprovals ?? []}
                  trans={trans}
                  onApprove={(callId, scope, ruleScope) =>
                    active.approve(callId, scope, ruleScope)
                  }
                  onDeny={(callId, reason) => active.deny(callId, reason)}
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
