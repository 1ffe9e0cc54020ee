import { SessionSocket } from '../socket';
import { AgentEvent } from '../tokens';
import { event, FakeSocket } from './fakeSocket';

const URL = 'ws://localhost:8888/hdsp-agent/sessions/abc/ws?token=secret';

function makeSocket(sinceSeq: () => number = () => 0): SessionSocket {
  const socket = new SessionSocket({
    url: URL,
    WebSocket: FakeSocket as unknown as typeof WebSocket,
    sinceSeq,
    retryDelays: [10, 20]
  });
  sockets.push(socket);
  return socket;
}

const sockets: SessionSocket[] = [];

beforeEach(() => {
  FakeSocket.reset();
  jest.useFakeTimers();
});

afterEach(() => {
  sockets.splice(0).forEach(socket => socket.dispose());
  jest.useRealTimers();
});

describe('SessionSocket', () => {
  it('says resume from the last seq first, then relays every event', () => {
    const socket = makeSocket(() => 7);
    const received: AgentEvent[] = [];
    socket.received.connect((_, event) => received.push(event));

    socket.open();
    const fake = FakeSocket.latest();
    expect(fake.url).toBe(URL);
    expect(socket.state).toBe('connecting');
    fake.accept();

    expect(socket.state).toBe('open');
    expect(fake.sent).toEqual([{ type: 'resume', since_seq: 7 }]);
    fake.deliver(event(8, 'turn.start', { turn_id: 't', model: 'm' }));
    fake.deliver({ type: 'command.ok', command: 'resume' });
    expect(received.map(event => event.seq)).toEqual([8]);
  });

  it('queues commands until the socket is open and resumed', async () => {
    const socket = makeSocket();
    socket.open();
    const reply = socket.send({ type: 'send', content: 'Hi', context: {} });

    const fake = FakeSocket.latest();
    fake.accept();
    expect(fake.sent.map(sent => sent.type)).toEqual(['resume', 'send']);
    expect(fake.sent[1]).toMatchObject({
      content: 'Hi',
      id: expect.any(String)
    });

    fake.ok('send');
    await expect(reply).resolves.toMatchObject({
      type: 'command.ok',
      command: 'send'
    });
  });

  it("rejects a command with the server's error message", async () => {
    const socket = makeSocket();
    socket.open();
    FakeSocket.latest().accept();
    const reply = socket.send({
      type: 'approve',
      call_id: 'nope',
      scope: 'once'
    });

    const fake = FakeSocket.latest();
    fake.deliver({
      type: 'command.error',
      command: 'approve',
      id: fake.sent[1].id,
      message: "no pending approval for call 'nope'"
    });

    await expect(reply).rejects.toThrow("no pending approval for call 'nope'");
  });

  it('reconnects after a drop and resumes from what the caller has seen', async () => {
    let seen = 3;
    const socket = makeSocket(() => seen);
    const states: SessionSocket.State[] = [];
    socket.stateChanged.connect((_, state) => states.push(state));
    socket.open();
    FakeSocket.latest().accept();
    const inFlight = socket.send({ type: 'cancel' });

    seen = 12;
    FakeSocket.latest().drop();
    expect(socket.state).toBe('reconnecting');
    await expect(inFlight).rejects.toThrow('the connection was lost');
    expect(FakeSocket.instances).toHaveLength(1);

    jest.advanceTimersByTime(10);
    expect(FakeSocket.instances).toHaveLength(2);
    FakeSocket.latest().accept();

    expect(socket.state).toBe('open');
    expect(FakeSocket.latest().sent).toEqual([
      { type: 'resume', since_seq: 12 }
    ]);
    expect(states).toEqual(['open', 'reconnecting', 'open']);
  });

  it('backs off while the server stays away', () => {
    const socket = makeSocket();
    socket.open();
    FakeSocket.latest().drop();
    jest.advanceTimersByTime(10);
    FakeSocket.latest().drop();
    jest.advanceTimersByTime(10);
    expect(FakeSocket.instances).toHaveLength(2);
    jest.advanceTimersByTime(10);
    expect(FakeSocket.instances).toHaveLength(3);
    expect(socket.state).toBe('reconnecting');
  });

  it('closes for good when disposed', async () => {
    const socket = makeSocket();
    socket.open();
    const fake = FakeSocket.latest();
    fake.accept();
    const pending = socket.send({ type: 'cancel' });

    socket.dispose();

    expect(fake.readyState).toBe(fake.CLOSED);
    expect(socket.state).toBe('closed');
    await expect(pending).rejects.toThrow('the conversation is closed');
    jest.advanceTimersByTime(1000);
    expect(FakeSocket.instances).toHaveLength(1);
    await expect(socket.send({ type: 'cancel' })).rejects.toThrow('closed');
  });

  it('ignores messages that are not JSON', () => {
    const socket = makeSocket();
    const received: AgentEvent[] = [];
    socket.received.connect((_, event) => received.push(event));
    socket.open();
    const fake = FakeSocket.latest();
    fake.accept();
    const warn = jest
      .spyOn(console, 'warn')
      .mockImplementation(() => undefined);

    fake.onmessage?.(new MessageEvent('message', { data: 'not json' }));

    expect(received).toEqual([]);
    expect(warn).toHaveBeenCalled();
    warn.mockRestore();
  });
});
