/**
 * Commands the sidebar sends over a conversation's WebSocket and the server's replies: mirrors of
 * `hdsp_agent/wire.py`.
 */
import type { AgentEvent, ApprovalScope } from './events';
import type { IClientContext } from './tokens';

interface ICommandBase {
  /**
   * Echoed back in the reply, to match replies to commands.
   */
  id?: string;
}

export interface ISendCommand extends ICommandBase {
  type: 'send';
  content: string;
  context: IClientContext;
  model?: string;
}

export interface IApproveCommand extends ICommandBase {
  type: 'approve';
  call_id: string;
  scope: ApprovalScope;
  /**
   * For scope "always": the saved rule covers this file, its folder, or the tool everywhere (the
   * server honours the broader two only for file and notebook writes).
   */
  rule_scope?: RuleScope;
}

export type RuleScope = 'exact' | 'folder' | 'everywhere';

export interface IDenyCommand extends ICommandBase {
  type: 'deny';
  call_id: string;
  reason?: string;
}

export interface ICancelCommand extends ICommandBase {
  type: 'cancel';
}

export interface IResumeCommand extends ICommandBase {
  type: 'resume';
  since_seq: number;
}

/**
 * "Approve plan": run the plan file (as it is now) in `mode`.
 */
export interface IRunPlanCommand extends ICommandBase {
  type: 'run_plan';
  path: string;
  mode: 'default' | 'accept-edits';
  context: IClientContext;
  model?: string | null;
}

export type ClientCommand =
  | ISendCommand
  | IRunPlanCommand
  | IApproveCommand
  | IDenyCommand
  | ICancelCommand
  | IResumeCommand;

export interface ICommandReply {
  type: 'command.ok' | 'command.error';
  command: ClientCommand['type'] | null;
  id?: string;
  message?: string;
}

/**
 * Anything the session socket receives.
 */
export type ServerMessage = AgentEvent | ICommandReply;
