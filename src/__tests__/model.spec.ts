import { PromiseDelegate } from '@lumino/coreutils';
import { waitFor } from '@testing-library/react';

import { AgentModel } from '../model';
import { IWorkspace } from '../workspace';
import {
  BASE_URL,
  fakeAgentServer,
  fakeServerSettings,
  Handler,
  jsonResponse,
  makeModel,
  serverAnswering,
  sessionRecord,
  standardRoutes
} from './fakeServer';
import { FakeSocket, simpleTurn } from './fakeSocket';

describe('AgentModel handshake', () => {
  it('is ready with the server tools when the versions match', async () => {
    const { settings } = serverAnswering('0.1.0');
    const model = makeModel(settings, '0.1.0');

    await model.connect();

    expect(model.status).toBe('ready');
    expect(model.error).toBeNull();
    expect(model.serverInfo?.version).toBe('0.1.0');
    expect(model.tools.map(tool => tool.name)).toEqual([
      'ls',
      'run_terminal_command'
    ]);
  });

  it('asks GET /hdsp-agent/info under the server base URL', async () => {
    const { settings, fetch } = serverAnswering('0.1.0');
    const model = makeModel(settings, '0.1.0');

    await model.connect();

    const request: Request = fetch.mock.calls[0][0];
    expect(request.method).toBe('GET');
    const url = new URL(request.url);
    expect(`${url.origin}${url.pathname}`).toBe(`${BASE_URL}hdsp-agent/info`);
  });

  it('compares its package.json version by default', async () => {
    const { settings } = serverAnswering('0.1.0');
    const model = makeModel(settings);

    await model.connect();

    expect(model.frontendVersion).toBe(require('../../package.json').version);
    expect(model.status).toBe(
      model.frontendVersion === '0.1.0' ? 'ready' : 'error'
    );
  });

  it('refuses a server of another release and names both versions', async () => {
    const { settings } = serverAnswering('0.2.0');
    const model = makeModel(settings, '0.1.0');

    await model.connect();

    expect(model.status).toBe('error');
    expect(model.serverInfo).toBeNull();
    expect(model.tools).toEqual([]);
    expect(model.error).toEqual({
      kind: 'version-mismatch',
      frontendVersion: '0.1.0',
      serverVersion: '0.2.0'
    });
  });

  it('treats the npm and PEP 440 spellings of a pre-release as the same version', async () => {
    const { settings } = serverAnswering('0.2.0a1');
    const model = makeModel(settings, '0.2.0-alpha.1');

    await model.connect();

    expect(model.status).toBe('ready');
  });

  it('is in error when the server cannot be reached', async () => {
    const { settings } = fakeServerSettings(() =>
      Promise.reject(new TypeError('Failed to fetch'))
    );
    const model = makeModel(settings, '0.1.0');

    await model.connect();

    expect(model.status).toBe('error');
    expect(model.error).toMatchObject({ kind: 'unreachable' });
    expect(model.error?.kind === 'unreachable' && model.error.detail).toContain(
      'Failed to fetch'
    );
  });

  it('reports the HTTP status when the server extension route is missing', async () => {
    const { settings } = fakeServerSettings(() =>
      jsonResponse({ message: 'Not Found' }, 404)
    );
    const model = makeModel(settings, '0.1.0');

    await model.connect();

    expect(model.status).toBe('error');
    expect(model.error).toMatchObject({ kind: 'unreachable', httpStatus: 404 });
  });

  it('is in error when the reply is not server info', async () => {
    const { settings } = fakeServerSettings(() =>
      jsonResponse({ hello: 'world' })
    );
    const model = makeModel(settings, '0.1.0');

    await model.connect();

    expect(model.status).toBe('error');
    expect(model.error).toMatchObject({ kind: 'unreachable' });
  });

  it('signals connecting, then the outcome', async () => {
    const { settings } = serverAnswering('0.1.0');
    const model = makeModel(settings, '0.1.0');
    const seen: AgentModel.Status[] = [];
    model.stateChanged.connect(() => {
      if (seen[seen.length - 1] !== model.status) {
        seen.push(model.status);
      }
    });

    await model.connect();

    expect(seen).toEqual(['connecting', 'ready']);
  });

  it('recovers on a retry once the server answers', async () => {
    let up = false;
    const { settings } = fakeServerSettings(() =>
      up
        ? jsonResponse({ name: 'hdsp-agent', version: '0.1.0', tools: [] })
        : Promise.reject(new TypeError('Failed to fetch'))
    );
    const model = makeModel(settings, '0.1.0');

    await model.connect();
    expect(model.status).toBe('error');
    up = true;
    await model.connect();

    expect(model.status).toBe('ready');
    expect(model.error).toBeNull();
  });
});

describe('AgentModel conversations', () => {
  const older = sessionRecord({
    id: 'b'.repeat(32),
    title: 'Older',
    updated: 50
  });
  const newer = sessionRecord({
    id: 'c'.repeat(32),
    title: 'Newer',
    updated: 90
  });

  async function connected(
    handlers: Record<string, Handler> = standardRoutes([older, newer]),
    options: Partial<AgentModel.IOptions> = {}
  ) {
    const { settings, fetch } = fakeAgentServer(handlers);
    const model = makeModel(settings, '0.1.0', options);
    await model.connect();
    return { model, fetch };
  }

  it('loads the models and conversations and reopens the most recent one', async () => {
    const { model } = await connected();

    expect(model.models?.models.map(info => info.name)).toEqual([
      'scripted',
      'big'
    ]);
    expect(model.sessions.map(session => session.title)).toEqual([
      'Newer',
      'Older'
    ]);
    expect(model.activeSession?.id).toBe(newer.id);

    const socket = FakeSocket.latest();
    expect(socket.url).toBe(
      `ws://localhost:8888/lab-base/hdsp-agent/sessions/${newer.id}/ws?token=secret`
    );
    socket.accept();
    expect(socket.sent).toEqual([{ type: 'resume', since_seq: 0 }]);
    simpleTurn().forEach(message => socket.deliver(message));
    expect(
      model.activeSession?.conversation.items.map(item => item.kind)
    ).toEqual(['user', 'assistant']);
    // The list follows what the open conversation announces.
    expect(model.sessions.find(session => session.id === newer.id)?.title).toBe(
      'Hi'
    );
  });

  it('restores the saved conversation, model and mode', async () => {
    const saved: IWorkspace = {
      activeSessionId: older.id,
      model: 'big',
      mode: 'read-only'
    };
    const store = {
      load: jest.fn(async () => saved),
      save: jest.fn(async () => undefined)
    };

    const { model } = await connected(undefined, { store });

    expect(model.activeSession?.id).toBe(older.id);
    expect(model.selectedModel).toBe('big');
    expect(model.mode).toBe('read-only');
  });

  it('forgets a saved model the server no longer offers', async () => {
    const store = {
      load: async () => ({
        activeSessionId: null,
        model: 'gone',
        mode: 'default' as const
      }),
      save: async () => undefined
    };
    const { model } = await connected(undefined, { store });
    expect(model.selectedModel).toBe('');
  });

  it("keeps the user's choices made before the saved workspace arrives", async () => {
    const saved = new PromiseDelegate<Partial<IWorkspace> | null>();
    const store = {
      load: () => saved.promise,
      save: jest.fn(async () => undefined)
    };
    const { settings } = fakeAgentServer(standardRoutes([older, newer]));
    const model = makeModel(settings, '0.1.0', { store });

    const connecting = model.connect();
    await new Promise(resolve => setTimeout(resolve, 0));
    model.newChat();
    model.mode = 'accept-edits';
    saved.resolve({
      activeSessionId: older.id,
      model: 'big',
      mode: 'read-only'
    });
    await connecting;

    expect(model.activeSession).toBeNull();
    expect(model.mode).toBe('accept-edits');
    expect(store.save).toHaveBeenLastCalledWith({
      activeSessionId: null,
      model: '',
      mode: 'accept-edits'
    });
  });

  it('creates the conversation on the first message and sends context, mode and model', async () => {
    const created = sessionRecord({ id: 'd'.repeat(32), updated: 200 });
    const posted: any[] = [];
    const { model } = await connected({
      ...standardRoutes([]),
      'POST sessions': (_, body) => {
        posted.push(body);
        return new Response(JSON.stringify(created), { status: 201 });
      }
    });
    expect(model.activeSession).toBeNull();
    model.selectedModel = 'big';
    model.mode = 'read-only';
    model.context.update({
      documentPath: 'work/analysis.ipynb',
      cells: [{ id: 'cell-1', index: 0, source: 'df.head()' }],
      activeCellId: 'cell-1'
    });
    model.context.removeCells();

    const sending = model.send('  Explain this  ');
    await waitFor(() => expect(FakeSocket.instances).toHaveLength(1));
    const socket = FakeSocket.latest();
    socket.accept();
    await waitFor(() => expect(socket.sent).toHaveLength(2));
    socket.ok('send');

    await expect(sending).resolves.toBe(true);
    expect(posted).toEqual([{ model: 'big' }]);
    expect(model.activeSession?.id).toBe(created.id);
    expect(model.sessions.map(session => session.id)).toEqual([created.id]);
    expect(socket.sent[1]).toMatchObject({
      type: 'send',
      content: 'Explain this',
      model: 'big',
      context: {
        active_document: { path: 'work/analysis.ipynb' },
        active_cell_id: 'cell-1',
        mode: 'read-only'
      }
    });
    expect(socket.sent[1].context.selected_cells).toBeUndefined();
    // The removed chip comes back for the next message.
    expect(model.context.cellsAttached).toBe(true);
  });

  it('reports a refused message and keeps the model usable', async () => {
    const { model } = await connected();
    const socket = FakeSocket.latest();
    socket.accept();

    const sending = model.send('Again');
    await waitFor(() => expect(socket.sent).toHaveLength(2));
    socket.deliver({
      type: 'command.error',
      command: 'send',
      id: socket.sent[1].id,
      message: 'a turn is already running in this session; stop it or wait'
    });

    await expect(sending).resolves.toBe(false);
    expect(model.actionError).toBe(
      'a turn is already running in this session; stop it or wait'
    );
  });

  it('renames, exports and deletes conversations', async () => {
    const { model, fetch } = await connected({
      ...standardRoutes([older, newer]),
      [`PATCH sessions/${older.id}`]: (_, body) => ({
        ...older,
        title: body.title
      }),
      [`GET sessions/${older.id}/export`]: () =>
        new Response('# Older\n\nHello', {
          headers: { 'Content-Type': 'text/markdown' }
        }),
      [`DELETE sessions/${newer.id}`]: () => new Response(null, { status: 204 })
    });

    await model.renameSession(older.id, 'Renamed');
    expect(model.sessions.find(session => session.id === older.id)?.title).toBe(
      'Renamed'
    );

    await expect(model.exportSession(older.id)).resolves.toBe(
      '# Older\n\nHello'
    );
    const exportUrl = new URL(fetch.mock.calls.at(-1)[0].url);
    expect(exportUrl.searchParams.get('format')).toBe('markdown');

    await model.deleteSession(newer.id);
    expect(model.sessions.map(session => session.id)).toEqual([older.id]);
    // The open conversation was the deleted one: the chat starts afresh.
    expect(model.activeSession).toBeNull();
    expect(model.actionError).toBeNull();
  });

  it('reports a failed action with the server message', async () => {
    const { model } = await connected({
      ...standardRoutes([older]),
      [`DELETE sessions/${older.id}`]: () =>
        jsonResponse({ message: 'no conversation here' }, 404)
    });

    await model.deleteSession(older.id);

    expect(model.actionError).toBe('no conversation here');
    expect(model.sessions).toHaveLength(1);
  });

  it('shows the setup state when no model is configured', async () => {
    const { model } = await connected(
      standardRoutes([], {
        configured: false,
        models: [],
        setup_help: 'Set c.HdspAgentApp.model',
        discovered: [
          {
            server: 'Ollama',
            base_url: 'http://127.0.0.1:11434/v1',
            models: ['llama3.1']
          }
        ]
      })
    );
    expect(model.models?.configured).toBe(false);
    expect(model.models?.discovered?.[0].server).toBe('Ollama');
  });
});
