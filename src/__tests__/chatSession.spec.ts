import { ChatSession } from '../chatSession';
import { AgentEvent } from '../tokens';
import { fakeAgentServer, SESSION_ID, sessionRecord } from './fakeServer';
import { event, FakeSocket, simpleTurn } from './fakeSocket';

const sessions: ChatSession[] = [];

function open(handlers = {}): { session: ChatSession; fetch: jest.Mock } {
  const { settings, fetch } = fakeAgentServer(handlers);
  const session = new ChatSession({
    serverSettings: settings,
    record: sessionRecord(),
    retryDelays: [1]
  });
  sessions.push(session);
  session.open();
  return { session, fetch };
}

afterEach(() => {
  sessions.splice(0).forEach(session => session.dispose());
  FakeSocket.reset();
});

describe('ChatSession', () => {
  it('replays from the start, then resumes from the last seq after a drop without duplicates', async () => {
    const { session } = open();
    const events = simpleTurn();
    const applied: number[] = [];
    session.eventApplied.connect((_, event) => applied.push(event.seq));

    FakeSocket.latest().accept();
    events.slice(0, 4).forEach(message => FakeSocket.latest().deliver(message));
    FakeSocket.latest().drop();
    expect(session.connection).toBe('reconnecting');

    await new Promise(resolve => setTimeout(resolve, 5));
    const second = FakeSocket.latest();
    second.accept();
    expect(second.sent).toEqual([{ type: 'resume', since_seq: 4 }]);
    // A server may replay more than asked: what was seen is dropped.
    events.forEach(message => second.deliver(message));

    expect(applied).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(session.connection).toBe('open');
    expect(session.conversation.items).toEqual([
      expect.objectContaining({ kind: 'user' }),
      expect.objectContaining({ kind: 'assistant', text: 'Hello world' })
    ]);
  });

  it('fetches the events it missed when one arrives after a gap', async () => {
    const events = simpleTurn();
    const { session, fetch } = open({
      [`GET sessions/${SESSION_ID}/events`]: (request: Request) => {
        const since = Number(new URL(request.url).searchParams.get('since'));
        return { events: events.filter(item => item.seq > since), last_seq: 7 };
      }
    });
    const applied: AgentEvent[] = [];
    session.eventApplied.connect((_, item) => applied.push(item));
    const socket = FakeSocket.latest();
    socket.accept();

    socket.deliver(events[0]);
    socket.deliver(events[4]);

    await new Promise(resolve => setTimeout(resolve, 0));
    await new Promise(resolve => setTimeout(resolve, 0));
    const url = new URL(fetch.mock.calls[0][0].url);
    expect(url.pathname).toBe(
      `/lab-base/hdsp-agent/sessions/${SESSION_ID}/events`
    );
    expect(url.searchParams.get('since')).toBe('1');
    expect(applied.map(item => item.seq)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(session.conversation.missingAfter).toBeNull();
  });

  it('sends approvals, denials with a trimmed reason, and stops', async () => {
    const { session } = open();
    const socket = FakeSocket.latest();
    socket.accept();

    const approve = session.approve('c1', 'session');
    socket.ok('approve');
    await approve;
    const always = session.approve('c4', 'always', 'folder');
    socket.ok('approve');
    await always;
    const deny = session.deny('c2', '  not this file  ');
    socket.ok('deny');
    await deny;
    const denyQuietly = session.deny('c3', '   ');
    socket.ok('deny');
    await denyQuietly;
    const cancel = session.cancel();
    socket.ok('cancel');
    await cancel;

    expect(socket.sent.slice(1).map(({ id, ...command }) => command)).toEqual([
      { type: 'approve', call_id: 'c1', scope: 'session' },
      { type: 'approve', call_id: 'c4', scope: 'always', rule_scope: 'folder' },
      { type: 'deny', call_id: 'c2', reason: 'not this file' },
      { type: 'deny', call_id: 'c3' },
      { type: 'cancel' }
    ]);
  });

  it('signals each change once per applied event', () => {
    const { session } = open();
    let changes = 0;
    session.changed.connect(() => changes++);
    const socket = FakeSocket.latest();
    socket.accept();
    changes = 0;

    socket.deliver(event(1, 'turn.start', { turn_id: 't', model: 'm' }));
    socket.deliver(event(1, 'turn.start', { turn_id: 't', model: 'm' }));

    expect(changes).toBe(1);
  });
});
