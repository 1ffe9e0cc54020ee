/**
 * Types shared with the server, mirrored one to one: the REST replies of `hdsp_agent/web/routes.py` here,
 * the events of `hdsp_agent/events.py` in `events.ts` and the commands of `hdsp_agent/wire.py` in
 * `wire.ts` (both re-exported); plus the frontend's command ids, client context and preferences.
 */

import type { AgentEvent } from './events';
import type { IWithTexts, ServerTexts } from './events';
import type { IHunk } from './hunks';

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
  export const fixError = 'hdsp-agent:fix-error';
  export const explainCell = 'hdsp-agent:explain-cell';
  export const editCell = 'hdsp-agent:edit-cell';
  export const checkReproducibility = 'hdsp-agent:check-reproducibility';
  export const revealCell = 'hdsp-agent:reveal-cell';
}

// -- REST replies ------------------------------------------------------------------------------------

// Every REST body and reply below is checked, type by type, against its pydantic model in
// hdsp_agent/web/rest_models.py (contracts/wire.json, section `rest`; src/__tests__/wireSchema.spec.ts).

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
  parameters: Record<string, unknown>;
}

/**
 * The OS sandbox shell commands run in (`GET /hdsp-agent/info`, `sandbox`).
 */
export interface ISandboxInfo extends IWithTexts {
  /**
   * The layer in use: bubblewrap (namespaces), Landlock (the fallback), or none.
   */
  layer: 'bubblewrap' | 'landlock' | 'none';
  active: boolean;
  /**
   * Why the sandbox is off (or which limits apply), in the user's words.
   */
  reason: string;
  /**
   * The admin requires the sandbox: without it, shell commands do not run.
   */
  required: boolean;
}

/**
 * The reply of `GET /hdsp-agent/info`: the server version for the handshake, the tool catalog and
 * the sandbox state (absent from servers older than the sandbox).
 */
export interface IServerInfo {
  name: string;
  version: string;
  tools: IToolInfo[];
  sandbox?: ISandboxInfo;
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
  profile?: string | null;
  tool_calls?: ToolCallMode | null;
  price_per_mtok_in?: number | null;
  price_per_mtok_out?: number | null;
  /** The latest readiness check of this model (the setup's "Test"), if one ran. */
  readiness?: IReadinessReport | null;
}

/** How the model calls tools: natively, described in the prompt and read from its text, or chosen for it. */
export type ToolCallMode = 'auto' | 'native' | 'text';

/** One line of the readiness check: a verdict, what was found, and what to do next. */
export interface IReadinessLine {
  check: 'streaming' | 'tools' | 'window' | 'prompt';
  verdict: 'ok' | 'warn' | 'fail';
  text: string;
  action: string;
}

/** The readiness check's result (`POST model-setup/test`), kept with the model. */
export interface IReadinessReport {
  model: string;
  base_url: string;
  streaming: 'streamed' | 'buffered' | 'failed';
  tools: 'native' | 'malformed' | 'text' | 'none' | 'refused' | 'failed';
  tool_mode: 'native' | 'text';
  context_window: number;
  window_source: 'configuration' | 'server' | 'default';
  profile: string;
  prompt_tokens: number;
  lines: IReadinessLine[];
  checked_at: number;
  max_tokens: number;
  verdict: 'ok' | 'warn' | 'fail';
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
export interface IModelsOverview extends IWithTexts {
  configured: boolean;
  models: IModelInfo[];
  setup_help?: string | null;
  discovered?: IDiscoveredServer[] | null;
  setup?: IModelSetupState | null;
}

/**
 * A project instruction file or rule that applies to the next message (`GET /hdsp-agent/instructions`).
 */
export interface IInstruction {
  name: string;
  path: string;
  kind: 'instructions' | 'rule';
}

/**
 * What the sidebar's model setup may show (`GET /hdsp-agent/model-setup`). The key never comes back: only
 * whether one is saved.
 */
export interface IModelSetupState extends IWithTexts {
  allowed: boolean;
  admin_contact: string;
  saved: ISavedModel | null;
  /** The server's environment holds a model key that every kernel inherits. */
  warning?: string | null;
}

/** The model the user saved (never its key: only whether one is set). */
export interface ISavedModel {
  base_url: string;
  model: string;
  key_set: boolean;
  tool_calls?: ToolCallMode | null;
  completion_model?: string;
}

/**
 * What the user saves in the model setup; `api_key` omitted keeps the key saved for the same endpoint.
 */
export interface IModelSetupRequest {
  base_url?: string;
  model?: string;
  api_key?: string | null;
  clear_key?: boolean;
  tool_calls?: ToolCallMode;
  completion_model?: string;
}

/** `POST model-setup/models`: the endpoint to list (its saved key is used when none is sent). */
export interface IEndpointModelsRequest {
  base_url?: string;
  api_key?: string | null;
}

/** `GET model-setup/test`: what the check costs at most. */
export interface IModelTestCost {
  max_tokens: number;
  requests: number;
}

/**
 * The models an endpoint lists (`POST model-setup/models`), or why it could not list them.
 */
export interface IEndpointModels {
  base_url: string;
  models: string[];
  error?: string | null;
}

/**
 * The reply of the setup's "Test" (`POST model-setup/test`): the readiness check, line by line; `error` is
 * the first failed line's text.
 */
export interface IModelTestReply extends IWithTexts {
  ok: boolean;
  readiness: IReadinessReport;
  error?: string | null;
  /**
   * The server's environment holds a model key that every kernel inherits (points to `api_key_file`).
   */
  warning?: string | null;
  texts?: ServerTexts;
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
  /**
   * The notebooks the conversation works on (contents paths): in view when a message was sent, or changed
   * or run by one of its tools.
   */
  notebooks?: string[];
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
  /** The turns undone or redone (absent for a single cell's undo). */
  turn_ids?: string[] | null;
  /** Every document touched, as Jupyter contents paths. */
  paths?: string[] | null;
}

/** `POST sessions`. */
export interface ICreateSessionRequest {
  title?: string | null;
  model?: string | null;
}

/** `PATCH sessions/{id}`. */
export interface IRenameSessionRequest {
  title: string;
}

/** `POST sessions/{id}/undo` and `.../redo`: the paths open with unsaved changes (never written under). */
export interface IUndoRequest {
  unsaved?: string[];
}

/** `POST sessions/{id}/restore`: back to the checkpoint before `turn_id`. */
export interface IRestoreRequest extends IUndoRequest {
  turn_id: string;
}

/** `POST sessions/{id}/undo-cell`. */
export interface IUndoCellRequest {
  path: string;
  cell_id: string;
}

export interface IKeepCellRequest {
  path: string;
  cell_id: string;
}

export interface IKeepCellReply {
  /** How many of the agent's changes to the cell are now kept. */
  kept: number;
}

/** `POST sessions/{id}/undo-hunk`. */
export interface IUndoHunkRequest {
  path: string;
  hunk: IHunk;
}

/** `GET sessions/{id}/hunks?path=P`. */
export interface IHunksReply {
  path: string;
  hunks: IHunk[];
}

/** `POST sessions/{id}/undo-hunk`: what was restored and the file's hunks left. */
export interface IUndoHunkReply {
  restored: string[];
  hunks: IHunk[];
}

/** `POST permissions/revoke`, a saved "always" rule. */
export interface IRevokeSavedRequest {
  kind: 'saved';
  rule: string;
}

/** `POST permissions/revoke`, a grant "for this chat". */
export interface IRevokeSessionRequest {
  kind: 'session';
  session_id: string;
  tool: string;
  subject: string;
}

/** `GET instructions`. */
export interface IInstructionsReply {
  instructions: IInstruction[];
}

/** `GET mentions`. */
export interface IMentionsReply {
  files: string[];
}

/** An undo that could not apply: the file or cell and why (`IErrorReply.conflicts`). */
export interface IUndoConflict {
  path: string;
  cell_id: string | null;
  reason: string;
}

/**
 * Every refusal of every route (hdsp_agent/web/errors.py): a stable code, the English message, the field
 * at fault for a malformed request, and the conflicts of an undo that could not apply.
 */
export interface IErrorReply extends IWithTexts {
  code: string;
  message: string;
  field?: string | null;
  conflicts?: IUndoConflict[] | null;
}

/**
 * A conversation's grant "for this chat" (`GET /hdsp-agent/permissions`).
 */
export interface ISessionGrant {
  tool: string;
  subject: string;
}

/**
 * The reply of `GET /hdsp-agent/permissions?session_id=…`: the chat's grants, the saved "always"
 * rules and the file that holds them.
 */
export interface IPermissionsOverview {
  session: ISessionGrant[];
  saved: string[];
  file: string | null;
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
  tools?: string[] | null;
  tool_details?: IMcpToolDetail[] | null;
  skipped_tools?: string[] | null;
  auto_approve?: string[] | null;
  /** For an untrusted server: the command line or URL that trusting the file would start. */
  launch?: string | null;
}

export interface IMcpProjectFile {
  path: string;
  status: 'trusted' | 'untrusted' | 'changed' | 'invalid';
  /** Of the file's content as the server read it: trust is granted for exactly that content. */
  sha256: string | null;
  /** Files inside the project its servers run, pinned with the file when it is trusted. */
  pinned_files?: string[] | null;
  /** Pinned files that changed since it was trusted (the problems list names them too). */
  changed_files?: string[] | null;
}

export interface IMcpProblem {
  source: string;
  /** Absent for a declared tool's problem (it has no server). */
  server?: string | null;
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

/** `POST mcp/trust` ``{"sha256"}``: the digest of .hdsp/mcp.json as the user reviewed it. */
export interface IMcpTrustRequest {
  sha256: string;
}

/** The reply of `POST mcp/trust`. */
export interface IMcpTrustReply {
  project: IMcpProjectFile;
}

/** A skill as `GET skills` lists it; only `trusted` ones are offered to the model. */
export interface ISkillInfo {
  name: string;
  description: string;
  source: 'builtin' | 'user' | 'project';
  path: string;
  sha256: string;
  status: 'trusted' | 'untrusted' | 'changed' | 'invalid';
  problem: string | null;
}

/** The reply of `GET skills`. */
export interface ISkillsReply {
  skills: ISkillInfo[];
}

/** The body of `POST skills/trust`: the folder and its hash as the user saw them. */
export interface ISkillTrustRequest {
  path: string;
  sha256: string;
}

/** The reply of `POST skills/trust`. */
export interface ISkillTrustReply {
  skill: ISkillInfo;
}

export * from './events';
export * from './serverText';
export * from './wire';

// -- The context the sidebar sends with a message -----------------------------------------------------

/**
 * How much the agent may do without asking (the server decides what each mode allows).
 */
export type AgentMode =
  'default' | 'accept-edits' | 'read-only' | 'accept-edits-run' | 'plan';

export const AGENT_MODES: readonly AgentMode[] = [
  'default',
  'accept-edits',
  'read-only',
  'accept-edits-run',
  'plan'
];

/** `/context`: the next request's tokens by part, summing to `total` (`POST sessions/{id}/context`). */
export interface IContextReply {
  parts: Record<string, number>;
  total: number;
  context_window: number;
  messages: number;
}

/** `/compact` (`POST sessions/{id}/compact`). */
export interface ICompactReply {
  compacted: boolean;
  summary?: string;
  messages_before?: number;
  messages_after?: number;
}

export interface IMcpPromptArgument {
  name: string;
  description: string;
  required: boolean;
}

/** An MCP server's prompt, offered as `/mcp:<server>:<name>` (`GET mcp/prompts`). */
export interface IMcpPromptInfo {
  server: string;
  name: string;
  description: string;
  arguments: IMcpPromptArgument[];
}

export interface IMcpPromptsReply {
  prompts: IMcpPromptInfo[];
  problems: Record<string, string>;
}

export interface ICellContext {
  id: string;
  index: number;
  source: string;
}

/**
 * What the user is looking at, sent with every message; the server tools default to the active notebook.
 */
/**
 * Something the user mentioned with `@` in a message: a project file, a cell of the active notebook, a
 * variable of its kernel. Sent with the message as context (the agent reads them with its tools).
 */
export type IMention =
  | { kind: 'file'; path: string }
  | { kind: 'cell'; cell_id: string; index: number; source: string }
  | { kind: 'variable'; name: string };

export interface IClientContext {
  mentions?: IMention[];
  active_document?: { path: string };
  selected_cells?: ICellContext[];
  active_cell_id?: string;
  mode?: AgentMode;
}

// -- Inline completion ----------------------------------------------------------------------------------

/** `POST complete`: the cursor in a cell or a file editor (src/inlineCompletion.ts). */
export interface IInlineCompletionRequest {
  prefix: string;
  suffix?: string;
  language?: string;
  path?: string;
  cells_above?: string[];
  variables?: string[];
}

/** The text to insert ("" when nothing fits), or why nothing was asked (a secret file). */
export interface IInlineCompletionReply {
  text: string;
  mode?: 'infill' | 'fim' | 'chat' | '';
  model?: string;
  skipped?: 'sensitive' | null;
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
