/**
 * Types shared with the server, mirrored one to one: the REST replies of `hdsp_agent/web/routes.py` here,
 * the events of `hdsp_agent/events.py` in `events.ts` and the commands of `hdsp_agent/wire.py` in
 * `wire.ts` (both re-exported); plus the frontend's command ids, client context and preferences.
 */

import type { AgentEvent } from './events';

/**
 * The URL namespace of every hdsp-agent route on the Jupyter server.
 */
export const API_NAMESPACE = 'hdsp-agent';

/**
 * The id of the frontend plugin; also the key of its settings.
 */
export const PLUGIN_ID = 'hdsp-agent:plugin';

/**
 * The DOM id of the sidebar panel.
 */
export const PANEL_ID = 'hdsp-agent-panel';

/**
 * The translation domain of every user-facing string.
 */
export const TRANSLATION_DOMAIN = 'hdsp_agent';

/**
 * Command ids registered by hdsp-agent.
 */
export namespace CommandIDs {
  export const open = 'hdsp-agent:open';
  export const newChat = 'hdsp-agent:new-chat';
  export const stop = 'hdsp-agent:stop';
  export const insertCode = 'hdsp-agent:insert-code';
  export const runCode = 'hdsp-agent:run-code';
}

// -- REST replies ------------------------------------------------------------------------------------

/**
 * One tool as the server describes it (`GET /hdsp-agent/info`).
 */
export interface IToolInfo {
  name: string;
  description: string;
  read_only: boolean;
  /**
   * The JSON Schema of the tool's arguments.
   */
  parameters: object;
}

/**
 * The reply of `GET /hdsp-agent/info`: the server version for the handshake and the tool catalog.
 */
export interface IServerInfo {
  name: string;
  version: string;
  tools: IToolInfo[];
}

/**
 * A model the server is configured to use (never its key).
 */
export interface IModelInfo {
  name: string;
  model: string;
  base_url: string | null;
  context_window: number;
  vision: boolean;
}

/**
 * A local OpenAI-compatible server found on 127.0.0.1 while no model is configured.
 */
export interface IDiscoveredServer {
  server: string;
  base_url: string;
  models: string[];
}

/**
 * The reply of `GET /hdsp-agent/models`.
 */
export interface IModelsOverview {
  configured: boolean;
  models: IModelInfo[];
  setup_help?: string;
  discovered?: IDiscoveredServer[];
}

export type SessionStatus = 'idle' | 'running';

/**
 * A conversation as `GET /hdsp-agent/sessions` lists it (times in seconds since the epoch).
 */
export interface ISessionRecord {
  id: string;
  title: string;
  created: number;
  updated: number;
  model: string;
  status: SessionStatus;
}

/**
 * The reply of `GET /hdsp-agent/sessions/{id}`.
 */
export interface ISessionDetail extends ISessionRecord {
  last_seq: number;
}

export interface ISessionList {
  sessions: ISessionRecord[];
}

/**
 * The reply of `GET /hdsp-agent/sessions/{id}/events?since=N`.
 */
export interface IEventsPage {
  events: AgentEvent[];
  last_seq: number;
}

export type ExportFormat = 'markdown' | 'json';

/**
 * The reply of `POST /hdsp-agent/sessions/{id}/undo`: what was restored, one line each.
 */
export interface IUndoReply {
  restored: string[];
}

// -- MCP servers (GET /hdsp-agent/mcp/servers) -----------------------------------------------------

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

export * from './events';
export * from './wire';

// -- The context the sidebar sends with a message -----------------------------------------------------

/**
 * How much the agent may do without asking (the server decides what each mode allows).
 */
export type AgentMode = 'default' | 'accept-edits' | 'read-only';

export const AGENT_MODES: readonly AgentMode[] = [
  'default',
  'accept-edits',
  'read-only'
];

export interface ICellContext {
  id: string;
  index: number;
  source: string;
}

/**
 * What the user is looking at, sent with every message; the server tools default to the active notebook.
 */
export interface IClientContext {
  active_document?: { path: string };
  selected_cells?: ICellContext[];
  active_cell_id?: string;
  mode?: AgentMode;
}

// -- Preferences ----------------------------------------------------------------------------------------

/**
 * Per-user UI preferences (schema/plugin.json).
 */
export interface IPreferences {
  sendOnEnter: boolean;
  showToolDetails: boolean;
  autoScroll: boolean;
}

export const DEFAULT_PREFERENCES: IPreferences = {
  sendOnEnter: true,
  showToolDetails: false,
  autoScroll: true
};
