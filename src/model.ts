import { ServerConnection } from '@jupyterlab/services';
import { IDisposable } from '@lumino/disposable';
import { ISignal, Signal } from '@lumino/signaling';

import { fetchServerInfo } from './api';
import { IPreferences, IServerInfo, IToolInfo } from './tokens';
import { FRONTEND_VERSION, versionsMatch } from './version';

/**
 * The state of the sidebar: the only caller of the server API.
 *
 * `connect()` performs the version handshake: the frontend refuses to talk to a server of another
 * release (a stale browser bundle or a half-upgraded install) and says so instead of failing later.
 */
export class AgentModel implements IDisposable {
  constructor(options: AgentModel.IOptions = {}) {
    this._serverSettings =
      options.serverSettings ?? ServerConnection.makeSettings();
    this.frontendVersion = options.frontendVersion ?? FRONTEND_VERSION;
  }

  /**
   * The version of this frontend, compared with the server's.
   */
  readonly frontendVersion: string;

  get status(): AgentModel.Status {
    return this._status;
  }

  /**
   * The server's reply; set only in the `ready` status.
   */
  get serverInfo(): IServerInfo | null {
    return this._serverInfo;
  }

  get tools(): IToolInfo[] {
    return this._serverInfo?.tools ?? [];
  }

  /**
   * Why the model is in the `error` status.
   */
  get error(): AgentModel.ConnectionError | null {
    return this._error;
  }

  get preferences(): IPreferences {
    return this._preferences;
  }

  set preferences(preferences: IPreferences) {
    this._preferences = { ...preferences };
    this._stateChanged.emit();
  }

  /**
   * Emitted whenever status, server info, error or preferences change.
   */
  get stateChanged(): ISignal<this, void> {
    return this._stateChanged;
  }

  get isDisposed(): boolean {
    return this._isDisposed;
  }

  /**
   * Ask the server who it is and check that it is the same release as this frontend.
   *
   * Never throws: a failure puts the model in the `error` status.
   */
  async connect(): Promise<void> {
    const attempt = ++this._attempt;
    this._setState('connecting', null, null);

    let serverInfo: IServerInfo;
    try {
      serverInfo = await fetchServerInfo(this._serverSettings);
    } catch (reason) {
      if (attempt === this._attempt) {
        this._setState('error', null, Private.unreachable(reason));
      }
      return;
    }
    if (attempt !== this._attempt) {
      return; // a newer connect() superseded this one
    }

    if (!versionsMatch(this.frontendVersion, serverInfo.version)) {
      this._setState('error', null, {
        kind: 'version-mismatch',
        frontendVersion: this.frontendVersion,
        serverVersion: serverInfo.version
      });
      return;
    }
    this._setState('ready', serverInfo, null);
  }

  dispose(): void {
    if (this._isDisposed) {
      return;
    }
    this._isDisposed = true;
    Signal.clearData(this);
  }

  private _setState(
    status: AgentModel.Status,
    serverInfo: IServerInfo | null,
    error: AgentModel.ConnectionError | null
  ): void {
    this._status = status;
    this._serverInfo = serverInfo;
    this._error = error;
    this._stateChanged.emit();
  }

  private _serverSettings: ServerConnection.ISettings;
  private _status: AgentModel.Status = 'connecting';
  private _serverInfo: IServerInfo | null = null;
  private _error: AgentModel.ConnectionError | null = null;
  private _preferences: IPreferences = { ...AgentModel.defaultPreferences };
  private _attempt = 0;
  private _isDisposed = false;
  private _stateChanged = new Signal<this, void>(this);
}

export namespace AgentModel {
  export interface IOptions {
    /**
     * Defaults to `ServerConnection.makeSettings()`.
     */
    serverSettings?: ServerConnection.ISettings;
    /**
     * Defaults to the version in package.json; tests set it.
     */
    frontendVersion?: string;
  }

  export type Status = 'connecting' | 'ready' | 'error';

  /**
   * The server answered, but it is another release than this frontend.
   */
  export interface IVersionMismatch {
    kind: 'version-mismatch';
    frontendVersion: string;
    serverVersion: string;
  }

  /**
   * The server could not be reached, refused the request, or answered nonsense.
   */
  export interface IUnreachable {
    kind: 'unreachable';
    /**
     * The HTTP status when the server answered (404: the server extension is not enabled).
     */
    httpStatus?: number;
    detail: string;
  }

  export type ConnectionError = IVersionMismatch | IUnreachable;

  export const defaultPreferences: IPreferences = {
    sendOnEnter: true,
    showToolDetails: false,
    autoScroll: true
  };
}

namespace Private {
  export function unreachable(reason: unknown): AgentModel.IUnreachable {
    if (reason instanceof ServerConnection.ResponseError) {
      return {
        kind: 'unreachable',
        httpStatus: reason.response.status,
        detail: `${reason.response.status} ${reason.response.statusText}`.trim()
      };
    }
    return {
      kind: 'unreachable',
      detail: reason instanceof Error ? reason.message : String(reason)
    };
  }
}
