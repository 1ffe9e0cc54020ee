import { ServerConnection } from '@jupyterlab/services';
import { IDisposable } from '@lumino/disposable';
import { ISignal, Signal } from '@lumino/signaling';

import { fetchEvents, sessionSocketUrl } from './api';
import { Conversation } from './conversation';
import { SessionSocket } from './socket';
import {
  AgentEvent,
  ApprovalScope,
  RuleScope,
  IClientContext,
  ISessionRecord
} from './tokens';

/**
 * One open conversation: its socket, the conversation folded from its events, and the commands the
 * user gives it. Part of the model layer: components read it and call its methods, never the API.
 */
export class ChatSession implements IDisposable {
  constructor(options: ChatSession.IOptions) {
    this.id = options.record.id;
    this._serverSettings = options.serverSettings;
    this._socket = new SessionSocket({
      url: sessionSocketUrl(options.serverSettings, this.id),
      WebSocket: options.serverSettings.WebSocket,
      sinceSeq: () => this.conversation.lastSeq,
      retryDelays: options.retryDelays
    });
    this._socket.received.connect(this._onEvent, this);
    this._socket.stateChanged.connect(() => this._changed.emit(), this);
  }

  readonly id: string;

  readonly conversation = new Conversation();

  /**
   * The socket's state: the sidebar shows a reconnecting indicator while it is not open.
   */
  get connection(): SessionSocket.State {
    return this._socket.state;
  }

  /**
   * Emitted after every event applied and every connection change.
   */
  get changed(): ISignal<this, void> {
    return this._changed;
  }

  /**
   * Emitted for each event applied, in seq order (after the conversation took it into account).
   */
  get eventApplied(): ISignal<this, AgentEvent> {
    return this._eventApplied;
  }

  get isDisposed(): boolean {
    return this._isDisposed;
  }

  /**
   * Connect and replay the conversation from the start.
   */
  open(): void {
    this._socket.open();
  }

  /**
   * Start a turn. Rejects with the server's reason (e.g. a turn is already running).
   */
  async send(
    content: string,
    context: IClientContext,
    model?: string
  ): Promise<void> {
    await this._socket.send({
      type: 'send',
      content,
      context,
      ...(model ? { model } : {})
    });
  }

  /**
   * "Approve plan": run the plan file in `mode` (the server reads the file as it is now).
   */
  async runPlan(
    path: string,
    mode: 'default' | 'accept-edits',
    context: IClientContext,
    model?: string
  ): Promise<void> {
    await this._socket.send({
      type: 'run_plan',
      path,
      mode,
      context,
      ...(model ? { model } : {})
    });
  }

  async approve(
    callId: string,
    scope: ApprovalScope,
    ruleScope?: RuleScope
  ): Promise<void> {
    await this._socket.send({
      type: 'approve',
      call_id: callId,
      scope,
      ...(ruleScope ? { rule_scope: ruleScope } : {})
    });
  }

  async deny(callId: string, reason?: string): Promise<void> {
    const trimmed = reason?.trim();
    await this._socket.send({
      type: 'deny',
      call_id: callId,
      ...(trimmed ? { reason: trimmed } : {})
    });
  }

  /**
   * Stop the running turn.
   */
  async cancel(): Promise<void> {
    await this._socket.send({ type: 'cancel' });
  }

  dispose(): void {
    if (this._isDisposed) {
      return;
    }
    this._isDisposed = true;
    this._socket.dispose();
    Signal.clearData(this);
  }

  private _onEvent(_: SessionSocket, event: AgentEvent): void {
    this._apply([event]);
  }

  private _apply(events: readonly AgentEvent[]): void {
    const applied = this.conversation.receiveAll(events);
    for (const event of applied) {
      this._eventApplied.emit(event);
    }
    if (applied.length > 0) {
      this._changed.emit();
    }
    if (this.conversation.missingAfter !== null) {
      void this._fillGap();
    }
  }

  /**
   * An event arrived ahead of the ones before it: fetch the missing part of the log over REST.
   */
  private async _fillGap(): Promise<void> {
    const since = this.conversation.missingAfter;
    if (this._filling || since === null) {
      return;
    }
    this._filling = true;
    try {
      const page = await fetchEvents(this._serverSettings, this.id, since);
      if (!this._isDisposed) {
        this._apply(page.events);
      }
    } catch (reason) {
      console.warn('hdsp-agent: could not fetch missing events', reason);
    } finally {
      this._filling = false;
    }
  }

  private _serverSettings: ServerConnection.ISettings;
  private _socket: SessionSocket;
  private _filling = false;
  private _isDisposed = false;
  private _changed = new Signal<this, void>(this);
  private _eventApplied = new Signal<this, AgentEvent>(this);
}

export namespace ChatSession {
  export interface IOptions {
    serverSettings: ServerConnection.ISettings;
    record: ISessionRecord;
    /**
     * Reconnection delays in milliseconds (tests shorten them).
     */
    retryDelays?: number[];
  }
}
