/**
 * What the chat shows, item by item: the conversation's events folded for display.
 */
import {
  ApprovalScope,
  IApprovalRequest,
  IClientContext,
  IToolDetails,
  IToolErrorInfo,
  ToolStatus,
  TurnEndReason
} from './tokens';
import type { INumberMark, ServerTexts } from './events';

/**
 * One tool call as the sidebar shows it, folded from its `tool.status`, `tool.progress` and
 * `approval.*` events.
 */
export interface IToolCallState {
  callId: string;
  name: string;
  status: ToolStatus;
  rawArguments: string | null;
  arguments: Record<string, unknown> | null;
  content: string | null;
  error: IToolErrorInfo | null;
  details: IToolDetails | null;
  progress: { message: string; elapsed: number | null } | null;
  approval: IApprovalRequest | null;
  resolution: {
    approved: boolean;
    scope: ApprovalScope;
    reason: string | null;
  } | null;
  /**
   * Server time (seconds) when the call started running, and when it ended.
   */
  startedAt: number | null;
  finishedAt: number | null;
  /**
   * How to translate the server's strings of this call (error, progress, denial reason): `serverText.ts`.
   */
  texts?: ServerTexts;
}

export interface IUserItem {
  kind: 'user';
  key: string;
  /** The turn the message started: its checkpoint. */
  turnId: string;
  content: string;
  context: IClientContext;
}

export interface IAssistantItem {
  kind: 'assistant';
  key: string;
  text: string;
  reasoning: string;
  /**
   * False while deltas are still streaming in.
   */
  complete: boolean;
  /**
   * The final answer's numbers, each tied to the output it came from or marked as found in none
   * (`answer.numbers`, sent before the turn ends).
   */
  numbers?: INumberMark[];
}

export interface IToolItem {
  kind: 'tool';
  key: string;
  call: IToolCallState;
}

export interface IErrorItem {
  kind: 'error';
  key: string;
  code: string;
  message: string;
  texts?: ServerTexts;
}

/**
 * The end of a turn that did not simply complete (stopped, failed, step limit, ...).
 */
export interface ITurnEndItem {
  kind: 'turn-end';
  key: string;
  reason: TurnEndReason;
  message: string | null;
  texts?: ServerTexts;
}

/**
 * A turn the user undid, with what was restored.
 */
export interface IUndoneItem {
  kind: 'undone';
  key: string;
  restored: string[];
  texts?: ServerTexts;
  /** How many turns it undid: one for Undo, more for a checkpoint restored further back. */
  turns: number;
  /** Whether it was later redone. */
  redone: boolean;
}

export interface IRedoneItem {
  kind: 'redone';
  key: string;
  restored: string[];
  texts?: ServerTexts;
}

/**
 * The context window: a warning that the prompt prefix is large, or a compaction of older turns (whose events
 * stay in the chat above it: the full history).
 */
export interface IContextItem {
  kind: 'context';
  key: string;
  /** `pruned`: older checkpoints were removed to keep the undo history under its size limit. */
  level: 'warning' | 'compacted' | 'pruned';
  message: string;
  summary: string | null;
  texts?: ServerTexts;
}

/**
 * Plan mode: the agent's plan, saved to `path`, waiting for "Approve plan" (or already approved).
 */
export interface IPlanCardItem {
  kind: 'plan';
  key: string;
  path: string;
  items: string[];
  approved: boolean;
}

export type ChatItem =
  | IPlanCardItem
  | IContextItem
  | IUserItem
  | IAssistantItem
  | IToolItem
  | IErrorItem
  | ITurnEndItem
  | IUndoneItem
  | IRedoneItem;

export const TERMINAL_STATUSES: ReadonlySet<ToolStatus> = new Set([
  'done',
  'errored',
  'denied',
  'canceled'
]);
