import { PromiseDelegate } from '@lumino/coreutils';
import { IDisposable } from '@lumino/disposable';
import { ISignal, Signal } from '@lumino/signaling';

import {
  AgentEvent,
  ClientCommand,
  ICommandReply,
  ServerMessage
} from './tokens';

/**
 * The WebSocket of one conversation: events in, commands out, reconnecting on its own.
 *
 * Every (re)connection starts with `resume` from the last seq the caller has seen, so the server
 * replays what was missed; the caller drops what it already has (replays may overlap). Commands sent
 * while the socket is down wait and go out, in order, after the next `resume`.
 */
export class SessionSocket implements IDisposable {
  constructor(options: SessionSocket.IOptions) {
    this._url = options.url;
    this._WebSocket = options.WebSocket;
    this._sinceSeq = options.sinceSeq;
    this._retryDelays = options.retryDelays ?? DEFAULT_RETRY_DELAYS;
  }

  get state(): SessionSocket.State {
    return this._state;
  }

  /**
   * Emitted when the state changes (open, reconnecting, ...).
   */
  get stateChanged(): ISignal<this, SessionSocket.State> {
    return this._stateChanged;
  }

  /**
   * Every event the server sends, in arrival order (replays included).
   */
  get received(): ISignal<this, AgentEvent> {
    return this._received;
  }

  get isDisposed(): boolean {
    return this._state === 'closed';
  }

  /**
   * Connect (once); later connections happen on their own after a drop.
   */
  open(): void {
    if (this._socket === null && this._state !== 'closed') {
      this._connect();
    }
  }

  /**
   * Send a command; resolves with the server's `command.ok`, rejects with its `command.error`
   * message or when the connection drops before the reply.
   */
  send(command: ClientCommand): Promise<ICommandReply> {
    if (this._state === 'closed') {
      return Promise.reject(new Error('the conversation is closed'));
    }
    const id = `c${++this._counter}`;
    const pending = new PromiseDelegate<ICommandReply>();
    // The caller may not wait for every reply (e.g. `cancel`): a rejection nobody awaits is not an error.
    pending.promise.catch(() => undefined);
    const message = JSON.stringify({ ...command, id });
    this._pending.set(id, pending);
    if (this._state === 'open') {
      this._write(id, message);
    } else {
      this._queue.push([id, message]);
    }
    return pending.promise;
  }

  dispose(): void {
    if (this._state === 'closed') {
      return;
    }
    this._setState('closed');
    window.clearTimeout(this._retryTimer);
    this._detach();
    this._failPending(new Error('the conversation is closed'));
    Signal.clearData(this);
  }

  private _connect(): void {
    const socket = new this._WebSocket(this._url);
    this._socket = socket;
    socket.onopen = () => {
      this._attempt = 0;
      // Resume first: the server sends nothing before it, and replays everything after the seq.
      socket.send(
        JSON.stringify({ type: 'resume', since_seq: this._sinceSeq() })
      );
      this._setState('open');
      for (const [id, message] of this._queue.splice(0)) {
        this._write(id, message);
      }
    };
    socket.onmessage = (message: MessageEvent) => this._onMessage(message);
    socket.onclose = () => this._onClose(socket);
    socket.onerror = () => {
      // A close follows every error; reconnecting is handled there.
    };
  }

  private _write(id: string, message: string): void {
    this._sent.add(id);
    this._socket?.send(message);
  }

  private _onMessage(message: MessageEvent): void {
    let payload: ServerMessage;
    try {
      payload = JSON.parse(String(message.data));
    } catch {
      console.warn('hdsp-agent: ignoring a message that is not JSON');
      return;
    }
    if (payload.type === 'command.ok' || payload.type === 'command.error') {
      this._onReply(payload);
    } else if (typeof (payload as AgentEvent).seq === 'number') {
      this._received.emit(payload as AgentEvent);
    }
  }

  private _onReply(reply: ICommandReply): void {
    const pending = reply.id ? this._pending.get(reply.id) : undefined;
    if (!pending || !reply.id) {
      return; // the reply to `resume`, or to a command whose caller is gone
    }
    this._pending.delete(reply.id);
    this._sent.delete(reply.id);
    if (reply.type === 'command.ok') {
      pending.resolve(reply);
    } else {
      pending.reject(new Error(reply.message ?? 'the command failed'));
    }
  }

  private _onClose(socket: WebSocket): void {
    if (socket !== this._socket || this._state === 'closed') {
      return;
    }
    this._detach();
    // Commands already sent may or may not have reached the server: their callers must know.
    for (const id of this._sent) {
      this._pending.get(id)?.reject(new Error('the connection was lost'));
      this._pending.delete(id);
    }
    this._sent.clear();
    this._setState('reconnecting');
    const delay =
      this._retryDelays[Math.min(this._attempt, this._retryDelays.length - 1)];
    this._attempt++;
    this._retryTimer = window.setTimeout(() => this._connect(), delay);
  }

  private _detach(): void {
    const socket = this._socket;
    this._socket = null;
    if (socket) {
      socket.onopen = socket.onmessage = socket.onclose = socket.onerror = null;
      if (
        socket.readyState === socket.OPEN ||
        socket.readyState === socket.CONNECTING
      ) {
        socket.close();
      }
    }
  }

  private _failPending(error: Error): void {
    for (const pending of this._pending.values()) {
      pending.reject(error);
    }
    this._pending.clear();
    this._sent.clear();
    this._queue = [];
  }

  private _setState(state: SessionSocket.State): void {
    if (this._state !== state) {
      this._state = state;
      this._stateChanged.emit(state);
    }
  }

  private _url: string;
  private _WebSocket: typeof WebSocket;
  private _sinceSeq: () => number;
  private _retryDelays: number[];
  private _socket: WebSocket | null = null;
  private _state: SessionSocket.State = 'connecting';
  private _attempt = 0;
  private _retryTimer = 0;
  private _counter = 0;
  private _pending = new Map<string, PromiseDelegate<ICommandReply>>();
  private _sent = new Set<string>();
  private _queue: [string, string][] = [];
  private _stateChanged = new Signal<this, SessionSocket.State>(this);
  private _received = new Signal<this, AgentEvent>(this);
}

/**
 * Wait after each failed attempt: quickly at first, then every 10 s.
 */
export const DEFAULT_RETRY_DELAYS = [500, 1000, 2000, 5000, 10000];

export namespace SessionSocket {
  export interface IOptions {
    url: string;
    /**
     * The WebSocket class (the server settings' one; tests pass a fake).
     */
    WebSocket: typeof WebSocket;
    /**
     * The last seq the caller has applied, asked again at each (re)connection.
     */
    sinceSeq: () => number;
    /**
     * Milliseconds to wait before each reconnection attempt (the last repeats).
     */
    retryDelays?: number[];
  }

  export type State = 'connecting' | 'open' | 'reconnecting' | 'closed';
}
