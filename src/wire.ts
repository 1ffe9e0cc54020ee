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
}

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

export type ClientCommand =
  | ISendCommand
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
