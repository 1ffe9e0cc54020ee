import { Conversation, IToolItem } from '../conversation';
import { AgentEvent } from '../tokens';
import { event, simpleTurn } from './fakeSocket';

function toolTurn(): AgentEvent[] {
  return [
    event(1, 'message.user', { turn_id: 't1', content: 'Run it', context: {} }),
    event(2, 'turn.start', { turn_id: 't1', model: 'scripted' }),
    event(3, 'tool.status', {
      call_id: 'c1',
      name: 'run_cell',
      status: 'generating'
    }),
    event(4, 'assistant.message', {
      message_id: 'm1',
      content: '',
      reasoning: '',
      tool_calls: [
        { id: 'c1', name: 'run_cell', arguments: '{"code": "print(6*7)"}' }
      ]
    }),
    event(5, 'tool.status', {
      call_id: 'c1',
      name: 'run_cell',
      status: 'generated',
      raw_arguments: '{"code": "print(6*7)"}'
    }),
    event(6, 'tool.status', {
      call_id: 'c1',
      name: 'run_cell',
      status: 'awaiting_approval',
      arguments: { code: 'print(6*7)' }
    }),
    event(7, 'approval.request', {
      request: {
        call_id: 'c1',
        tool: 'run_cell',
        arguments: { code: 'print(6*7)' },
        reasons: ['runs code'],
        preview: 'print(6*7)'
      }
    })
  ];
}

function tool(conversation: Conversation, callId = 'c1'): IToolItem['call'] {
  const item = conversation.items.find(
    (entry): entry is IToolItem =>
      entry.kind === 'tool' && entry.call.callId === callId
  );
  if (!item) {
    throw new Error(`no tool card for ${callId}`);
  }
  return item.call;
}

describe('Conversation', () => {
  it('folds a turn into a user message and the streamed answer', () => {
    const conversation = new Conversation();
    const events = simpleTurn();

    conversation.receiveAll(events.slice(0, 3));
    expect(conversation.running).toBe(true);
    expect(conversation.items).toEqual([
      expect.objectContaining({ kind: 'user', content: 'Hi' }),
      expect.objectContaining({
        kind: 'assistant',
        text: 'Hello ',
        complete: false
      })
    ]);

    conversation.receiveAll(events.slice(3));
    expect(conversation.items).toEqual([
      expect.objectContaining({ kind: 'user', content: 'Hi' }),
      expect.objectContaining({
        kind: 'assistant',
        text: 'Hello world',
        complete: true
      })
    ]);
    expect(conversation.running).toBe(false);
    expect(conversation.title).toBe('Hi');
    expect(conversation.lastSeq).toBe(7);
  });

  it('applies a replayed log once: duplicates change nothing', () => {
    const conversation = new Conversation();
    const events = simpleTurn();
    conversation.receiveAll(events.slice(0, 4));

    // A reconnection replays from 0 while the stream goes on.
    const applied = conversation.receiveAll(events);

    expect(applied.map(applied => applied.seq)).toEqual([5, 6, 7]);
    expect(
      conversation.items.filter(item => item.kind === 'assistant')
    ).toEqual([expect.objectContaining({ text: 'Hello world' })]);
    const before = conversation.items;
    expect(conversation.receiveAll(events)).toEqual([]);
    expect(conversation.items).toBe(before);
  });

  it('holds events that arrive ahead of a gap until the gap is filled', () => {
    const conversation = new Conversation();
    const events = simpleTurn();
    conversation.receiveAll(events.slice(0, 2));

    expect(conversation.receive(events[3])).toEqual([]);
    expect(conversation.receive(events[4])).toEqual([]);
    expect(conversation.lastSeq).toBe(2);
    expect(conversation.missingAfter).toBe(2);
    expect(conversation.items.some(item => item.kind === 'assistant')).toBe(
      false
    );

    const applied = conversation.receive(events[2]);

    expect(applied.map(event => event.seq)).toEqual([3, 4, 5]);
    expect(conversation.missingAfter).toBeNull();
    expect(conversation.items[1]).toMatchObject({
      kind: 'assistant',
      text: 'Hello world'
    });
  });

  it('keeps streamed reasoning apart from the answer', () => {
    const conversation = new Conversation();
    conversation.receiveAll([
      event(1, 'assistant.delta', {
        message_id: 'm1',
        kind: 'reasoning',
        text: 'Think '
      }),
      event(2, 'assistant.delta', {
        message_id: 'm1',
        kind: 'reasoning',
        text: 'hard'
      }),
      event(3, 'assistant.delta', {
        message_id: 'm1',
        kind: 'text',
        text: 'Answer'
      })
    ]);

    expect(conversation.items).toEqual([
      expect.objectContaining({
        kind: 'assistant',
        reasoning: 'Think hard',
        text: 'Answer'
      })
    ]);
  });

  it('follows a tool call to its approval and lists it as pending', () => {
    const conversation = new Conversation();
    conversation.receiveAll(toolTurn());

    const call = tool(conversation);
    expect(call).toMatchObject({
      name: 'run_cell',
      status: 'awaiting_approval',
      rawArguments: '{"code": "print(6*7)"}',
      arguments: { code: 'print(6*7)' }
    });
    expect(call.approval?.preview).toBe('print(6*7)');
    expect(
      conversation.pendingApprovals.map(pending => pending.callId)
    ).toEqual(['c1']);
    // The empty assistant message of a tool-only step is not a chat bubble with text.
    expect(conversation.items.map(item => item.kind)).toEqual([
      'user',
      'tool',
      'assistant'
    ]);
  });

  it('records the approval, the run and the result', () => {
    const conversation = new Conversation();
    conversation.receiveAll([
      ...toolTurn(),
      event(8, 'approval.resolved', {
        call_id: 'c1',
        approved: true,
        scope: 'once'
      }),
      event(
        9,
        'tool.status',
        { call_id: 'c1', name: 'run_cell', status: 'calling' },
        2000
      ),
      event(10, 'tool.progress', {
        call_id: 'c1',
        message: 'running',
        elapsed: 1.5
      }),
      event(
        11,
        'tool.status',
        {
          call_id: 'c1',
          name: 'run_cell',
          status: 'done',
          content: 'ok\n42',
          details: {
            path: 'a.ipynb',
            images: [{ mime_type: 'image/png', data: 'AAAA' }]
          }
        },
        2003
      )
    ]);

    const call = tool(conversation);
    expect(conversation.pendingApprovals).toEqual([]);
    expect(call).toMatchObject({
      status: 'done',
      content: 'ok\n42',
      resolution: { approved: true, scope: 'once', reason: null },
      progress: { message: 'running', elapsed: 1.5 },
      startedAt: 2000,
      finishedAt: 2003
    });
    expect(call.details?.images).toHaveLength(1);
  });

  it('records a denial with the user reason', () => {
    const conversation = new Conversation();
    conversation.receiveAll([
      ...toolTurn(),
      event(8, 'approval.resolved', {
        call_id: 'c1',
        approved: false,
        scope: 'once',
        reason: 'not now'
      }),
      event(9, 'tool.status', {
        call_id: 'c1',
        name: 'run_cell',
        status: 'denied',
        error: {
          code: 'E_DENIED',
          message: 'the user declined this call. Reason: not now'
        }
      })
    ]);

    expect(tool(conversation)).toMatchObject({
      status: 'denied',
      resolution: { approved: false, reason: 'not now' },
      error: { code: 'E_DENIED' }
    });
  });

  it('ends a stopped turn: unfinished calls are canceled and the stop is shown', () => {
    const conversation = new Conversation();
    conversation.receiveAll([
      ...toolTurn(),
      event(8, 'assistant.delta', {
        message_id: 'm2',
        kind: 'text',
        text: 'Part'
      }),
      event(9, 'turn.end', {
        turn_id: 't1',
        reason: 'canceled',
        message: 'stopped by the user'
      })
    ]);

    expect(conversation.running).toBe(false);
    expect(tool(conversation).status).toBe('canceled');
    expect(conversation.pendingApprovals).toEqual([]);
    expect(conversation.items.at(-2)).toMatchObject({
      kind: 'assistant',
      text: 'Part',
      complete: true
    });
    expect(conversation.items.at(-1)).toMatchObject({
      kind: 'turn-end',
      reason: 'canceled',
      message: 'stopped by the user'
    });
  });

  it('shows a context warning and a compaction with its summary, after the history it summarized', () => {
    const conversation = new Conversation();
    conversation.receiveAll([
      ...simpleTurn(),
      event(8, 'context.warning', {
        message:
          'The system prompt and 10 tool definitions take about 2,086 tokens',
        prefix_tokens: 2086,
        context_window: 4096,
        profile: 'compact'
      }),
      event(9, 'context.compacted', {
        message: 'Older messages were summarized',
        summary: 'Done: read the notebook.',
        messages_before: 11,
        messages_after: 3,
        tokens_before: 836,
        tokens_after: 290
      })
    ]);
    const kinds = conversation.items.map(item => item.kind);
    expect(kinds.slice(0, 2)).toEqual(['user', 'assistant']);
    expect(conversation.items.slice(-2)).toEqual([
      {
        kind: 'context',
        key: 'context-8',
        level: 'warning',
        message:
          'The system prompt and 10 tool definitions take about 2,086 tokens',
        summary: null
      },
      {
        kind: 'context',
        key: 'context-9',
        level: 'compacted',
        message: 'Older messages were summarized',
        summary: 'Done: read the notebook.'
      }
    ]);
  });

  it('shows server errors and does not mark a completed turn', () => {
    const conversation = new Conversation();
    conversation.receiveAll([
      event(1, 'message.user', { turn_id: 't1', content: 'Hi', context: {} }),
      event(2, 'error', {
        code: 'E_MODEL_NOT_CONFIGURED',
        message: 'No model is configured.'
      }),
      event(3, 'turn.end', {
        turn_id: 't1',
        reason: 'error',
        message: 'no model is configured'
      })
    ]);
    expect(conversation.items.map(item => item.kind)).toEqual([
      'user',
      'error',
      'turn-end'
    ]);
    expect(conversation.items[1]).toMatchObject({
      code: 'E_MODEL_NOT_CONFIGURED'
    });

    conversation.receiveAll(simpleTurn(4, 't2', 'm2'));
    expect(
      conversation.items.filter(item => item.kind === 'turn-end')
    ).toHaveLength(1);
  });

  it('follows the server on whether a turn runs', () => {
    const conversation = new Conversation();
    conversation.receive(
      event(1, 'session.updated', { title: 'Named', status: 'running' })
    );
    expect(conversation.running).toBe(true);
    conversation.receive(
      event(2, 'session.updated', { title: 'Named', status: 'idle' })
    );
    expect(conversation.running).toBe(false);
  });
});

describe('Conversation undo', () => {
  it('allows undoing the last turn once it ended, and only once', () => {
    const conversation = new Conversation();
    expect(conversation.canUndo).toBe(false);
    conversation.receiveAll(simpleTurn().slice(0, 3));
    expect(conversation.canUndo).toBe(false);
    conversation.receiveAll(simpleTurn().slice(3));
    expect(conversation.canUndo).toBe(true);

    conversation.receive(
      event(8, 'turn.undone', {
        turn_id: 't1',
        restored: ['analysis.ipynb: cell c1', 'notes.txt: restored']
      })
    );

    expect(conversation.canUndo).toBe(false);
    expect(conversation.items.at(-1)).toMatchObject({
      kind: 'undone',
      restored: ['analysis.ipynb: cell c1', 'notes.txt: restored']
    });
    conversation.receiveAll(simpleTurn(9, 't2', 'm2'));
    expect(conversation.canUndo).toBe(true);
  });
});

describe('Conversation checkpoints and redo', () => {
  it('stops offering the checkpoints the bound on the undo history removed, and says so', () => {
    const conversation = new Conversation();
    conversation.receiveAll(simpleTurn(1, 't1', 'm1'));
    conversation.receiveAll(simpleTurn(8, 't2', 'm2'));
    const message =
      'Older checkpoints were removed to keep the undo history under 0.1 MB: those turns can no longer be undone.';
    conversation.receive(
      event(15, 'checkpoints.pruned', {
        turn_ids: ['t1'],
        limit_mb: 0.1,
        message,
        texts: {
          [message]: {
            id: 'Older checkpoints were removed to keep the undo history under %1 MB: those turns can no longer be undone.',
            params: ['0.1']
          }
        }
      })
    );
    expect(conversation.canRestore('t1')).toBe(false);
    expect(conversation.canRestore('t2')).toBe(true);
    expect(conversation.canUndo).toBe(true);
    expect(conversation.items.at(-1)).toMatchObject({
      kind: 'context',
      level: 'pruned',
      message
    });
  });

  it('offers each ended turn as a checkpoint until it is undone, and redo until a new turn starts', () => {
    const conversation = new Conversation();
    conversation.receiveAll(simpleTurn(1, 't1', 'm1'));
    conversation.receiveAll(simpleTurn(8, 't2', 'm2'));
    expect(conversation.canRestore('t1')).toBe(true);
    expect(conversation.canRestore('t2')).toBe(true);
    expect(conversation.redoKey).toBeNull();

    // Restoring t1's checkpoint undoes t1 and t2.
    conversation.receive(
      event(15, 'turn.undone', {
        turn_id: 't1',
        turn_ids: ['t1', 't2'],
        restored: ['notes.txt: restored'],
        paths: ['notes.txt']
      })
    );
    expect(conversation.canRestore('t1')).toBe(false);
    expect(conversation.canRestore('t2')).toBe(false);
    expect(conversation.canUndo).toBe(false);
    expect(conversation.redoKey).toBe('undone-15');
    expect(conversation.items.at(-1)).toMatchObject({
      kind: 'undone',
      turns: 2,
      redone: false
    });

    // Redo brings both back as checkpoints; the undo notice is no longer redoable.
    conversation.receive(
      event(16, 'turn.redone', {
        turn_ids: ['t1', 't2'],
        restored: ['notes.txt: written again'],
        paths: ['notes.txt']
      })
    );
    expect(conversation.canRestore('t1')).toBe(true);
    expect(conversation.canUndo).toBe(true);
    expect(conversation.redoKey).toBeNull();
    expect(conversation.items.at(-1)).toMatchObject({ kind: 'redone' });

    // An undo, then a new turn: nothing to redo anymore.
    conversation.receive(
      event(17, 'turn.undone', {
        turn_id: 't2',
        restored: ['notes.txt: restored']
      })
    );
    expect(conversation.redoKey).toBe('undone-17');
    conversation.receiveAll(simpleTurn(18, 't3', 'm3'));
    expect(conversation.redoKey).toBeNull();
    expect(conversation.canRestore('t3')).toBe(true);
  });
});
