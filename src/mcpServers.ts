import { ServerConnection } from '@jupyterlab/services';
import { ISignal, Signal } from '@lumino/signaling';

import { fetchMcpServers, trustProjectFile } from './api';
import { describeFailure } from './handshake';
import type { IMcpReport } from './tokens';

// The replies of the MCP routes are declared with the other REST replies, in tokens.ts.
export type {
  IMcpProblem,
  IMcpProjectFile,
  IMcpReport,
  IMcpServerStatus,
  IMcpToolDetail,
  McpServerSource,
  McpServerState
} from './tokens';

/**
 * The MCP servers the agent uses, as the sidebar shows them: loaded when the user looks, never in
 * the background (starting a server starts a program).
 */
export class McpServers {
  constructor(serverSettings: ServerConnection.ISettings) {
    this._serverSettings = serverSettings;
  }

  /** The last report; null until the first load. */
  get report(): IMcpReport | null {
    return this._report;
  }

  /** Whether a load is under way (connecting can take seconds: programs start). */
  get loading(): boolean {
    return this._pending > 0;
  }

  /** Why the last load or trust failed; null after a success. */
  get error(): string | null {
    return this._error;
  }

  get changed(): ISignal<this, void> {
    return this._changed;
  }

  /**
   * Show the state at once, then connect the servers and show the result.
   */
  async open(): Promise<void> {
    await this.load(false);
    await this.load(true);
  }

  /**
   * Load the report; with `connect`, the servers are started (or tried again) first.
   */
  async load(connect: boolean): Promise<void> {
    const load = ++this._loads;
    await this._track(async () => {
      const report = await fetchMcpServers(this._serverSettings, connect);
      // An answer that arrives after a newer one (a quick state read overtaking a slow connect,
      // or the reverse) must not replace it.
      if (load >= this._shown) {
        this._shown = load;
        this._report = report;
      }
    });
  }

  /**
   * Trust the project file as last shown, then connect its servers.
   */
  async trustProject(): Promise<void> {
    const sha256 = this._report?.project?.sha256;
    if (!sha256) {
      return;
    }
    const trusted = await this._track(() =>
      trustProjectFile(this._serverSettings, sha256)
    );
    if (trusted) {
      await this.load(true);
    }
  }

  private async _track(work: () => Promise<void>): Promise<boolean> {
    this._pending++;
    this._changed.emit();
    try {
      await work();
      this._error = null;
      return true;
    } catch (reason) {
      this._error = describeFailure(reason);
      return false;
    } finally {
      this._pending--;
      this._changed.emit();
    }
  }

  private _serverSettings: ServerConnection.ISettings;
  private _report: IMcpReport | null = null;
  private _error: string | null = null;
  private _pending = 0;
  private _loads = 0;
  private _shown = 0;
  private _changed = new Signal<this, void>(this);
}
