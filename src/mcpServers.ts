import { URLExt } from '@jupyterlab/coreutils';
import { ServerConnection } from '@jupyterlab/services';
import { ISignal, Signal } from '@lumino/signaling';

import { describeFailure } from './handshake';
import { requestAPI } from './request';

/**
 * Where a server's entry comes from: the user's mcp.json, the administrator's traitlets, the
 * project's .hdsp/mcp.json.
 */
export type McpServerSource = 'user' | 'config' | 'project';

/**
 * `idle`: configured, not started yet (servers start on first use); `error`: could not start or
 * died (`message` has why, with the tail of its stderr); `denied`: the administrator forbids it;
 * `untrusted`: in a project file the user has not trusted.
 */
export type McpServerState =
  | 'idle'
  | 'connecting'
  | 'connected'
  | 'error'
  | 'closed'
  | 'disabled'
  | 'denied'
  | 'untrusted';

export interface IMcpToolDetail {
  /** Our name, `server__tool`, as the model and the permission rules see it. */
  name: string;
  /** The server's own name for it. */
  remote_name: string;
  description: string;
  /** Listed in the server's `autoApprove`. */
  auto_approved: boolean;
}

export interface IMcpServerStatus {
  name: string;
  source: McpServerSource;
  transport: 'stdio' | 'http';
  state: McpServerState;
  message?: string | null;
  server_name?: string | null;
  tools?: string[];
  tool_details?: IMcpToolDetail[];
  skipped_tools?: string[];
  auto_approve?: string[];
  /** For an untrusted server: the command line or URL that trusting the file would start. */
  launch?: string;
}

export interface IMcpProjectFile {
  path: string;
  status: 'trusted' | 'untrusted' | 'changed' | 'invalid';
  /** Of the file's content as the server read it: trust is granted for exactly that content. */
  sha256: string | null;
}

export interface IMcpProblem {
  source: string;
  server: string | null;
  message: string;
}

/**
 * `GET /hdsp-agent/mcp/servers`.
 */
export interface IMcpReport {
  servers: IMcpServerStatus[];
  project: IMcpProjectFile | null;
  problems: IMcpProblem[];
  declared_tool_problems: IMcpProblem[];
  endpoint: { enabled: boolean; path: string };
}

/**
 * `GET /hdsp-agent/mcp/servers`: with `connect`, the server reads its configuration again and
 * starts the servers (a failed one is tried again); without, the state as it is.
 */
export async function fetchMcpServers(
  serverSettings: ServerConnection.ISettings,
  connect: boolean
): Promise<IMcpReport> {
  const query = URLExt.objectToQueryString({ refresh: connect ? '1' : '0' });
  const reply = await requestAPI<IMcpReport>(
    `mcp/servers${query}`,
    serverSettings
  );
  if (
    typeof reply !== 'object' ||
    reply === null ||
    !Array.isArray(reply.servers)
  ) {
    throw new Error('Unexpected reply from /hdsp-agent/mcp/servers');
  }
  return {
    ...reply,
    problems: reply.problems ?? [],
    declared_tool_problems: reply.declared_tool_problems ?? []
  };
}

/**
 * `POST /hdsp-agent/mcp/trust`: trust the project's .hdsp/mcp.json as the user saw it.
 *
 * @throws ServerConnection.ResponseError 409 when the file changed since it was read
 */
export async function trustProjectFile(
  serverSettings: ServerConnection.ISettings,
  sha256: string
): Promise<void> {
  await requestAPI('mcp/trust', serverSettings, {
    method: 'POST',
    body: JSON.stringify({ sha256 })
  });
}

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
