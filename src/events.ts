/**
 * Events the server sends over a conversation's WebSocket: mirrors of `hdsp_agent/events.py`,
 * discriminated by `type`, each with its place (`seq`) in the conversation's log.
 */
import type { IClientContext, SessionStatus } from './tokens';

/**
 * How to translate one of the server's user-facing strings: its catalog template and what fills
 * `%1`, `%2`, ... (`hdsp_agent/user_text.py`; shown through `serverText.ts`).
 */
export interface ITextRef {
  id: string;
  params: string[];
}

/**
 * English text → how to translate it.
 */
export type ServerTexts = Record<string, ITextRef>;

/**
 * A wire object with user-facing strings (events, the approval request, REST replies).
 */
export interface IWithTexts {
  texts?: ServerTexts;
}

export type ToolStatus =
  | 'generating'
  | 'generated'
  | 'awaiting_approval'
  | 'calling'
  | 'done'
  | 'errored'
  | 'denied'
  | 'canceled';

export type TurnEndReason =
  | 'completed'
  | 'canceled'
  | 'error'
  | 'step_limit'
  | 'repeated_call'
  | 'interrupted';

export type ApprovalScope = 'once' | 'session' | 'always';

export interface IToolErrorInfo {
  code: string;
  message: string;
  suggestion?: string | null;
}

/**
 * An image of a tool result (`details.images`: cell outputs, MCP results), base64 in `data`.
 */
export interface IToolImage {
  mime_type: string;
  data: string;
  width?: number | null;
  height?: number | null;
}

/**
 * What a tool returns for the UI besides its text; tools add their own keys.
 */
export interface IToolDetails {
  diff?: string;
  images?: IToolImage[];
  // read_file of a picture.
  image?: { mime_type: string; base64: string };
  output_cut?: { cut_chars: number; total_chars: number };
  path?: string;
  [key: string]: unknown;
}

export interface IToolCallSummary {
  id: string;
  name: string;
  arguments: string;
}

/**
 * What the server asks the user before a call runs.
 */
export interface IApprovalRequest extends IWithTexts {
  call_id: string;
  tool: string;
  arguments: Record<string, unknown>;
  reasons: string[];
  /**
   * A unified diff for edits, the code for run_cell, the command for shell.
   */
  preview?: string | null;
  action_kind?: string | null;
  action_target?: string | null;
  /**
   * How the call will run once approved (shell commands): in the OS sandbox without network, in
   * the sandbox with network, or outside it with the user's full permissions; null for other tools.
   */
  run_mode?: RunMode | null;
  /**
   * The user approved this tool on this subject twice already in this chat: the card offers "allow for
   * this chat" (exactly this tool and subject) in one click.
   */
  offer_session?: boolean;
}

/**
 * Where an approved shell command runs (`hdsp_agent/sandbox/`).
 */
export type RunMode = 'sandboxed' | 'network' | 'unsandboxed';

/**
 * Every event carries its place in the session's log.
 */
export interface IEventEnvelope {
  seq: number;
  session_id: string;
  ts: number;
}

export interface IUserMessageEvent extends IEventEnvelope {
  type: 'message.user';
  turn_id: string;
  content: string;
  context: IClientContext;
}

export interface ITurnStartEvent extends IEventEnvelope {
  type: 'turn.start';
  turn_id: string;
  model: string;
  /**
   * The model's context window in tokens (configured or read from its server), and the tool profile.
   */
  context_window?: number | null;
  profile?: string | null;
}

export interface ITurnEndEvent extends IEventEnvelope, IWithTexts {
  type: 'turn.end';
  turn_id: string;
  reason: TurnEndReason;
  message?: string | null;
}

export interface IAssistantDeltaEvent extends IEventEnvelope {
  type: 'assistant.delta';
  message_id: string;
  kind: 'text' | 'reasoning';
  text: string;
}

/**
 * Tokens of one model call: as the model's server reported them, else estimated from the characters sent.
 */
export interface IStepUsage {
  prompt_tokens: number;
  completion_tokens: number;
  estimated: boolean;
  /** The prompt by part (system, tools, history, tool_results); adds up to `prompt_tokens`. */
  breakdown?: Record<string, number> | null;
}

export interface IAssistantMessageEvent extends IEventEnvelope {
  type: 'assistant.message';
  message_id: string;
  content: string;
  reasoning: string;
  tool_calls: IToolCallSummary[];
  usage?: IStepUsage | null;
}

export interface IToolStatusEvent extends IEventEnvelope, IWithTexts {
  type: 'tool.status';
  call_id: string;
  name: string;
  status: ToolStatus;
  raw_arguments?: string | null;
  arguments?: Record<string, unknown> | null;
  content?: string | null;
  error?: IToolErrorInfo | null;
  details?: IToolDetails | null;
}

export interface IToolProgressEvent extends IEventEnvelope, IWithTexts {
  type: 'tool.progress';
  call_id: string;
  message: string;
  elapsed?: number | null;
}

export interface IApprovalRequestEvent extends IEventEnvelope {
  type: 'approval.request';
  request: IApprovalRequest;
}

export interface IApprovalResolvedEvent extends IEventEnvelope, IWithTexts {
  type: 'approval.resolved';
  call_id: string;
  approved: boolean;
  scope: ApprovalScope;
  reason?: string | null;
}

/**
 * The user undid a turn: the files and cells it changed were restored (one line each).
 */
export interface ITurnUndoneEvent extends IEventEnvelope, IWithTexts {
  type: 'turn.undone';
  turn_id: string;
  restored: string[];
  /** That turn and every later one undone with it (a restored checkpoint); absent in older logs. */
  turn_ids?: string[];
  /** Every document the undo touched, as Jupyter contents paths (the form open documents are found by). */
  paths?: string[];
}

/**
 * The user redid the last undo: the turns' changes are back, and they can be undone again.
 */
export interface ITurnRedoneEvent extends IEventEnvelope, IWithTexts {
  type: 'turn.redone';
  turn_ids: string[];
  restored: string[];
  paths?: string[];
}

/**
 * The user kept the agent's change to one cell, or undid it alone: its review mark goes (also on a reloaded
 * page), and no later undo takes a kept change back.
 */
export interface ICellReviewedEvent extends IEventEnvelope {
  type: 'cell.reviewed';
  path: string;
  cell_id: string;
  outcome: 'kept' | 'undone';
}

/**
 * The stored undo history grew past its bound (`undo_history_mb`): the checkpoints before these turns were
 * removed, oldest first; those turns can no longer be undone or restored to.
 */
export interface ICheckpointsPrunedEvent extends IEventEnvelope, IWithTexts {
  type: 'checkpoints.pruned';
  turn_ids: string[];
  limit_mb: number;
  message: string;
}

export interface IErrorEvent extends IEventEnvelope, IWithTexts {
  type: 'error';
  code: string;
  message: string;
}

/**
 * The system prompt and tool schemas alone take more than the configured share of the model's window.
 */
export interface IContextWarningEvent extends IEventEnvelope, IWithTexts {
  type: 'context.warning';
  message: string;
  prefix_tokens: number;
  context_window: number;
  profile: string;
}

/**
 * Older turns were summarized to fit the window; the events before this one still hold the full history.
 */
export interface IContextCompactedEvent extends IEventEnvelope, IWithTexts {
  type: 'context.compacted';
  message: string;
  summary: string;
  messages_before: number;
  messages_after: number;
  tokens_before: number;
  tokens_after: number;
}

export interface ISessionUpdatedEvent extends IEventEnvelope {
  type: 'session.updated';
  title: string;
  status: SessionStatus;
  /**
   * The notebooks the conversation works on (contents paths); absent in logs written before.
   */
  notebooks?: string[] | null;
}

/**
 * Where a number of the final answer is shown: a tool call's result (`call_id`), or the user's message.
 */
export interface INumberSourceRef {
  call_id?: string | null;
  tool?: string | null;
  line: string;
  line_number: number;
}

/**
 * One number of the final answer (`start`/`end`: offsets in its text) and the output it came from.
 */
export interface INumberMark {
  text: string;
  start: number;
  end: number;
  found: boolean;
  source?: INumberSourceRef | null;
}

/**
 * After a turn's final answer: its numbers tied to the turn's outputs, or marked as found in none.
 */
export interface IAnswerNumbersEvent extends IEventEnvelope {
  type: 'answer.numbers';
  turn_id: string;
  message_id: string;
  marks: INumberMark[];
}

/**
 * A kernel variable the turn's runs created, changed or deleted: a summary, never the value.
 */
export interface IVariableChangeInfo {
  name: string;
  change: 'created' | 'changed' | 'deleted';
  type: string;
  shape?: unknown[] | null;
  length?: number | null;
  preview?: string | null;
}

/**
 * After a turn that ran code: each notebook's kernel variables its runs changed, for the review bar.
 */
export interface IKernelChangesEvent extends IEventEnvelope {
  type: 'kernel.changes';
  turn_id: string;
  notebooks: Record<string, IVariableChangeInfo[]>;
}

/**
 * Plan mode: the agent's plan, saved by the server to `path` (`.hdsp/plans/…`); the chat shows it with
 * "Approve plan" and "Edit".
 */
export interface IPlanProposedEvent extends IEventEnvelope {
  type: 'plan.proposed';
  turn_id: string;
  path: string;
  items: string[];
}

/**
 * The user approved the plan at `path` (as the file was then): it runs in `mode`, `items` its checklist.
 */
export interface IPlanApprovedEvent extends IEventEnvelope {
  type: 'plan.approved';
  path: string;
  mode: string;
  items: string[];
}

export type AgentEvent =
  | IToolStatusEvent
  | IToolProgressEvent
  | IApprovalRequestEvent
  | IApprovalResolvedEvent
  | IUserMessageEvent
  | ITurnStartEvent
  | ITurnEndEvent
  | IAssistantDeltaEvent
  | IAssistantMessageEvent
  | IErrorEvent
  | IContextWarningEvent
  | IContextCompactedEvent
  | ISessionUpdatedEvent
  | ITurnUndoneEvent
  | ITurnRedoneEvent
  | ICellReviewedEvent
  | ICheckpointsPrunedEvent
  | IAnswerNumbersEvent
  | IKernelChangesEvent
  | IPlanProposedEvent
  | IPlanApprovedEvent;
