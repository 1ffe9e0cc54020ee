import { AgentEvent } from '../tokens';

/**
 * A WebSocket stand-in: records what the client sends and lets the test play the server.
 */
export class FakeSocket {
  static instances: FakeSocket[] = [];

  static latest(): FakeSocket {
    return FakeSocket.instances[FakeSocket.instances.length - 1];
  }

  static reset(): void {
    FakeSocket.instances = [];
  }

  readonly CONNECTING = 0;
  readonly OPEN = 1;
  readonly CLOSING = 2;
  readonly CLOSED = 3;

  constructor(readonly url: string) {
    FakeSocket.instances.push(this);
  }

  readyState = 0;
  sent: any[] = [];
  onopen: ((event: Event) => void) | null = null;
  onmessage: ((event: MessageEvent) => void) | null = null;
  onclose: ((event: CloseEvent) => void) | null = null;
  onerror: ((event: Event) => void) | null = null;

  send(data: string): void {
    if (this.readyState !== this.OPEN) {
      throw new Error('send on a socket that is not open');
    }
    this.sent.push(JSON.parse(data));
  }

  close(): void {
    this.readyState = this.CLOSED;
  }

  /** The server accepts the connection. */
  accept(): void {
    this.readyState = this.OPEN;
    this.onopen?.(new Event('open'));
  }

  /** The server sends a message. */
  deliver(message: unknown): void {
    this.onmessage?.(
      new MessageEvent('message', { data: JSON.stringify(message) })
    );
  }

  /** The connection drops. */
  drop(): void {
    this.readyState = this.CLOSED;
    this.onclose?.(new Event('close') as CloseEvent);
  }

  /** Reply ok to the last command of a type. */
  ok(type: string): void {
    const command = [...this.sent].reverse().find(sent => sent.type === type);
    this.deliver({ type: 'command.ok', command: type, id: command?.id });
  }
}

/**
 * Wire events with the envelope filled in.
 */
export function event<T extends AgentEvent['type']>(
  seq: number,
  type: T,
  fields: Omit<
    Extract<AgentEvent, { type: T }>,
    'seq' | 'type' | 'session_id' | 'ts'
  >,
  ts = 1000 + seq
): Extract<AgentEvent, { type: T }> {
  return { seq, type, session_id: 'a'.repeat(32), ts, ...fields } as any;
}

/**
 * One complete turn: the user asks, the agent answers "Hello world" in two deltas.
 */
export function simpleTurn(
  start = 1,
  turn = 't1',
  message = 'm1'
): AgentEvent[] {
  return [
    event(start, 'message.user', { turn_id: turn, content: 'Hi', context: {} }),
    event(start + 1, 'turn.start', { turn_id: turn, model: 'scripted' }),
    event(start + 2, 'assistant.delta', {
      message_id: message,
      kind: 'text',
      text: 'Hello '
    }),
    event(start + 3, 'assistant.delta', {
      message_id: message,
      kind: 'text',
      text: 'world'
    }),
    event(start + 4, 'assistant.message', {
      message_id: message,
      content: 'Hello world',
      reasoning: '',
      tool_calls: []
    }),
    event(start + 5, 'turn.end', { turn_id: turn, reason: 'completed' }),
    event(start + 6, 'session.updated', { title: 'Hi', status: 'idle' })
  ];
}
