import { TranslationBundle } from '@jupyterlab/translation';
import * as React from 'react';

import { IToolCallState } from '../conversation';
import { ApprovalScope, IApprovalRequest, RuleScope, RunMode } from '../tokens';
import { approvalQuestion, baseName, callSubject } from '../toolWords';
import { DiffView, isUnifiedDiff } from './DiffView';
import { serverText } from '../serverText';

export interface IApprovalQueueProps {
  /**
   * Calls waiting for the user, oldest first.
   */
  pending: IToolCallState[];
  onApprove: (
    callId: string,
    scope: ApprovalScope,
    ruleScope?: RuleScope
  ) => Promise<void>;
  onDeny: (callId: string, reason: string) => Promise<void>;
  trans: TranslationBundle;
  /** The document a call acts on when it is not the one in view (its card says so), else null. */
  elsewhere?: (call: IToolCallState) => string | null;
}

/**
 * The approvals waiting for the user: the oldest one in full, the others listed below it.
 */
export function ApprovalQueue(props: IApprovalQueueProps): JSX.Element | null {
  const { pending, trans } = props;
  if (pending.length === 0) {
    return null;
  }
  const [first, ...rest] = pending;
  return (
    <div className="jp-hdsp-ApprovalQueue">
      <ApprovalCard
        key={first.callId}
        call={first}
        position={1}
        total={pending.length}
        onApprove={(scope, ruleScope) =>
          ruleScope
            ? props.onApprove(first.callId, scope, ruleScope)
            : props.onApprove(first.callId, scope)
        }
        onDeny={reason => props.onDeny(first.callId, reason)}
        trans={trans}
        elsewhere={props.elsewhere?.(first) ?? null}
      />
      {rest.length > 0 && (
        <ul
          className="jp-hdsp-ApprovalQueue-rest"
          aria-label={trans.__('Approvals waiting')}
        >
          {rest.map((call, index) => (
            <li key={call.callId}>
              {trans.__(
                '%1. %2',
                index + 2,
                call.approval
                  ? approvalQuestion(call.approval, trans)
                  : call.name
              )}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

/**
 * The one-click scope offered after the second identical approval ("allow for this chat", exactly this tool
 * on this notebook, file or command: the server's grant is never broader), in the user's words.
 */
export function offerText(
  request: IApprovalRequest,
  trans: TranslationBundle
): string {
  const subject = callSubject(request.arguments, request.action_target);
  if (request.tool === 'run_cell' && subject) {
    return trans.__('Run cells in %1 without asking for this chat', subject);
  }
  if (request.action_kind === 'Execute') {
    return trans.__('Run this command without asking for this chat');
  }
  if (request.action_kind === 'FileWrite' && subject) {
    return trans.__('Change %1 without asking for this chat', subject);
  }
  return trans.__('Allow calls like this without asking for this chat');
}

/**
 * Where the user was typing: a text field with something in it (keyboard shortcuts leave it alone).
 */
export function isTypingIn(element: Element | null): boolean {
  return (
    (element instanceof HTMLTextAreaElement ||
      element instanceof HTMLInputElement) &&
    element.value.trim() !== ''
  );
}

export interface IApprovalCardProps {
  call: IToolCallState;
  position: number;
  total: number;
  onApprove: (scope: ApprovalScope, ruleScope?: RuleScope) => Promise<void>;
  onDeny: (reason: string) => Promise<void>;
  trans: TranslationBundle;
  /** The document the call changes or runs when it is not the one in view: said before the user decides. */
  elsewhere?: string | null;
}

/**
 * The places an "always" rule may cover for this request: the file itself, its folder, everywhere
 * (file and notebook writes only, as the server allows), or null when the rule can only be exact.
 */
export function alwaysScopes(
  request: IApprovalRequest
): { file: string; folder: string | null } | null {
  if (!['FileWrite', 'Kernel'].includes(request.action_kind ?? '')) {
    return null;
  }
  const file = callSubject(request.arguments, request.action_target);
  if (!file) {
    return null;
  }
  const full =
    request.action_target && /[\\/.]/.test(request.action_target)
      ? request.action_target
      : String(request.arguments.filepath ?? request.arguments.path ?? file);
  const parent = full.replace(/[\\/]+$/, '').replace(/[\\/]?[^\\/]*$/, '');
  return { file, folder: parent ? baseName(parent) : null };
}

/**
 * What a tool call would do, why it needs the user, and the user's answer: allow once, for this
 * conversation, always, or deny with an optional reason the model reads.
 */
export function ApprovalCard(props: IApprovalCardProps): JSX.Element {
  const { call, position, total, trans } = props;
  const request = call.approval!;
  const [denying, setDenying] = React.useState(false);
  const [reason, setReason] = React.useState('');
  const [busy, setBusy] = React.useState(false);
  const [choosingScope, setChoosingScope] = React.useState(false);
  const scopes = alwaysScopes(request);
  const titleId = `jp-hdsp-Approval-title-${call.callId}`;
  const reasonsId = `jp-hdsp-Approval-reasons-${call.callId}`;
  const primary = React.useRef<HTMLButtonElement>(null);

  // The card takes the focus when it appears, unless the user is typing: a message in the composer, or
  // anything outside the sidebar (a notebook cell). The shortcuts work from the composer either way.
  React.useEffect(() => {
    const card = primary.current;
    const focused = document.activeElement;
    const inPanel =
      !focused ||
      focused === document.body ||
      !!card?.closest('.jp-hdsp-ChatPanel')?.contains(focused);
    if (card && inPanel && !isTypingIn(focused)) {
      card.focus();
    }
  }, []);

  const answer = async (action: () => Promise<void>) => {
    setBusy(true);
    try {
      await action();
    } finally {
      setBusy(false);
    }
  };
  const deny = () => answer(() => props.onDeny(reason));
  const question = approvalQuestion(request, trans);

  return (
    <div
      className="jp-hdsp-ApprovalCard"
      role="dialog"
      aria-modal="false"
      aria-labelledby={titleId}
      aria-describedby={reasonsId}
      data-call-id={call.callId}
      onKeyDown={event => {
        // Escape declines this call (the turn goes on); the panel's Escape would stop the whole turn.
        if (event.key === 'Escape' && !event.defaultPrevented && !busy) {
          event.preventDefault();
          event.stopPropagation();
          void deny();
        }
      }}
    >
      {/* One line until opened (the chat keeps its room in a narrow sidebar); a call that would run
          outside the sandbox opens by itself, so that warning is never folded away. */}
      <details
        className="jp-hdsp-ApprovalCard-body"
        open={request.run_mode === 'unsandboxed'}
      >
        <summary className="jp-hdsp-ApprovalCard-title">
          {/* The card is named by its question alone (not the fold marker the summary shows). */}
          {/* Cut to one line while folded: the whole question is its title. */}
          <span
            className="jp-hdsp-ApprovalCard-question"
            id={titleId}
            title={question}
          >
            {question}
          </span>
          {total > 1 && (
            <span className="jp-hdsp-ApprovalCard-count">
              {trans.__('%1 of %2', position, total)}
            </span>
          )}
        </summary>
        {request.action_target && (
          <div className="jp-hdsp-ApprovalCard-target">
            <code>{request.action_target}</code>
          </div>
        )}
        {request.run_mode && (
          <div
            className={`jp-hdsp-ApprovalCard-runMode jp-mod-${request.run_mode}`}
            data-run-mode={request.run_mode}
          >
            {runModeText(request.run_mode, trans)}
          </div>
        )}
        <ul className="jp-hdsp-ApprovalCard-reasons" id={reasonsId}>
          {request.reasons.map((text, index) => (
            <li key={index}>{serverText(trans, text, request.texts)}</li>
          ))}
        </ul>
        {request.preview &&
          (isUnifiedDiff(request.preview) ? (
            <DiffView diff={request.preview} label={trans.__('Preview')} />
          ) : (
            <pre
              className="jp-hdsp-ApprovalCard-preview"
              aria-label={trans.__('Preview')}
            >
              {request.preview}
            </pre>
          ))}
        <details className="jp-hdsp-ApprovalCard-arguments">
          <summary>{trans.__('Details')}</summary>
          <div className="jp-hdsp-ApprovalCard-tool">
            {request.action_kind
              ? trans.__(
                  'Tool %1 · permission %2',
                  request.tool,
                  request.action_kind
                )
              : trans.__('Tool %1', request.tool)}
          </div>
          <pre>{JSON.stringify(request.arguments, null, 2)}</pre>
        </details>
      </details>
      {/* Outside the folded body: the user knows where the call acts before answering. */}
      {props.elsewhere && (
        <div className="jp-hdsp-ApprovalCard-elsewhere" role="note">
          {trans.__(
            'In %1, not the document in view.',
            baseName(props.elsewhere)
          )}
        </div>
      )}
      {choosingScope && scopes ? (
        <div
          className="jp-hdsp-ApprovalCard-scopes"
          role="group"
          aria-label={trans.__('Always allow where?')}
        >
          <div className="jp-hdsp-ApprovalCard-scopesTitle">
            {trans.__('Always allow where?')}
          </div>
          <div className="jp-hdsp-ApprovalCard-buttons">
            <button
              type="button"
              className="jp-mod-styled jp-mod-accept"
              disabled={busy}
              onClick={() =>
                void answer(() => props.onApprove('always', 'exact'))
              }
            >
              {trans.__('Only %1', scopes.file)}
            </button>
            <button
              type="button"
              className="jp-mod-styled"
              disabled={busy}
              onClick={() =>
                void answer(() => props.onApprove('always', 'folder'))
              }
            >
              {scopes.folder
                ? trans.__('Anything in the folder %1', scopes.folder)
                : trans.__('Anything in the project folder')}
            </button>
            <button
              type="button"
              className="jp-mod-styled jp-mod-warn"
              disabled={busy}
              onClick={() =>
                void answer(() => props.onApprove('always', 'everywhere'))
              }
            >
              {trans.__('Everywhere')}
            </button>
            <button
              type="button"
              className="jp-mod-styled jp-mod-reject"
              disabled={busy}
              onClick={() => setChoosingScope(false)}
            >
              {trans.__('Back')}
            </button>
          </div>
        </div>
      ) : denying ? (
        <div className="jp-hdsp-ApprovalCard-deny">
          <input
            className="jp-mod-styled jp-hdsp-ApprovalCard-reason"
            autoFocus
            value={reason}
            placeholder={trans.__('Why? (optional, the agent reads it)')}
            aria-label={trans.__('Reason for denying')}
            disabled={busy}
            onChange={event => setReason(event.target.value)}
            onKeyDown={event => {
              if (event.key === 'Enter') {
                event.preventDefault();
                void deny();
              } else if (event.key === 'Escape') {
                event.preventDefault();
                event.stopPropagation();
                setDenying(false);
              }
            }}
          />
          <div className="jp-hdsp-ApprovalCard-buttons">
            <button
              type="button"
              className="jp-mod-styled jp-mod-warn"
              disabled={busy}
              onClick={() => void deny()}
            >
              {trans.__('Deny')}
            </button>
            <button
              type="button"
              className="jp-mod-styled jp-mod-reject"
              disabled={busy}
              onClick={() => setDenying(false)}
            >
              {trans.__('Back')}
            </button>
          </div>
        </div>
      ) : (
        <div className="jp-hdsp-ApprovalCard-buttons">
          {request.offer_session && (
            <button
              type="button"
              className="jp-mod-styled jp-mod-accept jp-hdsp-ApprovalCard-offer"
              disabled={busy}
              aria-keyshortcuts="Control+Shift+Enter"
              title={trans.__(
                'You allowed this twice: allow it until this conversation ends (Ctrl+Shift+Enter)'
              )}
              onClick={() => void answer(() => props.onApprove('session'))}
            >
              {offerText(request, trans)}
            </button>
          )}
          <button
            ref={primary}
            type="button"
            className="jp-mod-styled jp-mod-accept"
            disabled={busy}
            aria-keyshortcuts="Control+Enter"
            title={trans.__('Allow this call (Ctrl+Enter)')}
            onClick={() => void answer(() => props.onApprove('once'))}
          >
            {trans.__('Allow once')}
          </button>
          {!request.offer_session && (
            <button
              type="button"
              className="jp-mod-styled"
              disabled={busy}
              aria-keyshortcuts="Control+Shift+Enter"
              title={trans.__(
                'Allow calls like this one until this conversation ends (Ctrl+Shift+Enter)'
              )}
              onClick={() => void answer(() => props.onApprove('session'))}
            >
              {trans.__('Allow for this chat')}
            </button>
          )}
          <button
            type="button"
            className="jp-mod-styled"
            disabled={busy}
            title={trans.__(
              'Allow calls like this one from now on (saved as a rule)'
            )}
            onClick={() =>
              scopes
                ? setChoosingScope(true)
                : void answer(() => props.onApprove('always'))
            }
          >
            {scopes ? trans.__('Always allow…') : trans.__('Always allow')}
          </button>
          <button
            type="button"
            className="jp-mod-styled jp-mod-warn"
            disabled={busy}
            aria-keyshortcuts="Control+Backspace Escape"
            title={trans.__(
              'Decline this call, with a reason if you like (Ctrl+Backspace or Escape declines at once)'
            )}
            onClick={() => setDenying(true)}
          >
            {trans.__('Deny…')}
          </button>
        </div>
      )}
    </div>
  );
}

/**
 * What a screen reader hears when a card starts waiting (an always-present live region, so the change is
 * announced): the question and the keys that answer it.
 */
export function approvalAnnouncement(
  pending: IToolCallState[],
  trans: TranslationBundle
): string {
  const request = pending[0]?.approval;
  if (!request) {
    return '';
  }
  return trans.__(
    'Waiting for your approval: %1 Ctrl+Enter allows once, Ctrl+Shift+Enter allows for this chat, Ctrl+Backspace declines.',
    approvalQuestion(request, trans)
  );
}

/**
 * How an approved command will run, in the user's words.
 */
export function runModeText(mode: RunMode, trans: TranslationBundle): string {
  switch (mode) {
    case 'sandboxed':
      return trans.__(
        'Runs in the sandbox: no network, only the project folder is writable.'
      );
    case 'network':
      return trans.__(
        'Runs in the sandbox with network access; only the project folder is writable.'
      );
    case 'unsandboxed':
      return trans.__('Runs outside the sandbox, with your full permissions.');
  }
}
