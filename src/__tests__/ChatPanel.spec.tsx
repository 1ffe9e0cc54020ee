import { nullTranslator } from '@jupyterlab/translation';
import {
  act,
  fireEvent,
  render,
  screen,
  waitFor
} from '@testing-library/react';
import * as React from 'react';

import { ChatView } from '../components/ChatPanel';
import { AgentModel } from '../model';
import {
  fakeAgentServer,
  fakeServerSettings,
  jsonResponse,
  makeModel,
  serverAnswering,
  serverInfo,
  sessionRecord,
  standardRoutes
} from './fakeServer';
import { event, FakeSocket, simpleTurn } from './fakeSocket';
import { makeCommands, makeRendermime } from './rendermime';

const trans = nullTranslator.load('hdsp_agent');

function view(model: AgentModel) {
  const { commands } = makeCommands();
  return render(
    <ChatView
      model={model}
      commands={commands}
      rendermime={makeRendermime()}
      trans={trans}
    />
  );
}

async function openConversation() {
  const { settings } = fakeAgentServer(
    standardRoutes([sessionRecord({ title: 'Plots' })])
  );
  const model = makeModel(settings, '0.1.0');
  await model.connect();
  view(model);
  const socket = FakeSocket.latest();
  act(() => socket.accept());
  return { model, socket };
}

describe('ChatView connection', () => {
  it('shows the server version and its tools when connected', async () => {
    const { settings } = fakeAgentServer(standardRoutes());
    const model = makeModel(settings, '0.1.0');
    await model.connect();

    view(model);

    expect(screen.getByRole('heading', { name: 'hdsp-agent' })).toBeTruthy();
    expect(
      screen.getByText('Connected to hdsp-agent server 0.1.0 · 2 tools')
    ).toBeTruthy();
    expect(screen.getByText('ls')).toBeTruthy();
    expect(screen.getByText('run_terminal_command')).toBeTruthy();
    expect(screen.getByRole('textbox', { name: 'Message' })).toBeTruthy();
    expect(screen.queryByRole('alert')).toBeNull();
  });

  it('says in the sidebar when the sandbox is off, and why', async () => {
    const { settings } = fakeAgentServer({
      ...standardRoutes(),
      'GET info': () => ({
        ...serverInfo('0.1.0'),
        sandbox: {
          layer: 'none',
          active: false,
          reason: 'user namespaces are disabled',
          required: false
        }
      })
    });
    const model = makeModel(settings, '0.1.0');
    await model.connect();

    view(model);

    expect(
      screen.getByText(
        'Sandbox off: user namespaces are disabled. Shell commands will ask first.'
      )
    ).toBeTruthy();
  });

  it('re-renders when the model connects after mounting', async () => {
    const { settings } = fakeAgentServer(standardRoutes());
    const model = makeModel(settings, '0.1.0');

    view(model);
    expect(
      screen.getByText('Connecting to the hdsp-agent server…')
    ).toBeTruthy();
    await act(() => model.connect());

    expect(
      await screen.findByText(/^Connected to hdsp-agent server 0\.1\.0/)
    ).toBeTruthy();
  });

  it('shows tool descriptions only when the preference asks for them', async () => {
    const { settings } = fakeAgentServer(standardRoutes());
    const model = makeModel(settings, '0.1.0');
    await model.connect();
    const description = 'List the files and folders in a directory.';

    view(model);
    expect(screen.queryByText(description)).toBeNull();
    act(() => {
      model.preferences = { ...model.preferences, showToolDetails: true };
    });

    expect(await screen.findByText(description)).toBeTruthy();
  });

  it('explains a version mismatch', async () => {
    const { settings } = serverAnswering('0.2.0');
    const model = makeModel(settings, '0.1.0');
    await model.connect();

    view(model);

    expect(screen.getByRole('alert').textContent).toContain(
      'Version mismatch: frontend 0.1.0, server 0.2.0'
    );
    expect(screen.queryByRole('textbox', { name: 'Message' })).toBeNull();
  });

  it('offers a retry when the server is unreachable', async () => {
    let up = false;
    const { settings, fetch } = fakeServerSettings(async request =>
      up
        ? new URL(request.url).pathname.endsWith('/info')
          ? jsonResponse({ name: 'hdsp-agent', version: '0.1.0', tools: [] })
          : jsonResponse({ configured: true, models: [], sessions: [] })
        : Promise.reject(new TypeError('Failed to fetch'))
    );
    const model = makeModel(settings, '0.1.0');
    await model.connect();

    view(model);
    expect(screen.getByRole('alert').textContent).toContain(
      'Cannot reach the hdsp-agent server'
    );

    up = true;
    fireEvent.click(screen.getByRole('button', { name: 'Retry' }));

    expect(
      await screen.findByText('Connected to hdsp-agent server 0.1.0 · 0 tools')
    ).toBeTruthy();
    expect(fetch.mock.calls.length).toBeGreaterThan(1);
  });

  it('explains a missing server extension', async () => {
    const { settings } = fakeServerSettings(() =>
      jsonResponse({ message: 'Not Found' }, 404)
    );
    const model = makeModel(settings, '0.1.0');
    await model.connect();

    view(model);

    expect(screen.getByRole('alert').textContent).toContain(
      'jupyter server extension list'
    );
  });

  it('shows the setup screen when no model is configured', async () => {
    const { settings } = fakeAgentServer(
      standardRoutes([], {
        configured: false,
        models: [],
        setup_help: "c.HdspAgentApp.model = 'llama3.1'",
        discovered: [
          {
            server: 'Ollama',
            base_url: 'http://127.0.0.1:11434/v1',
            models: ['llama3.1', 'qwen2.5']
          }
        ]
      })
    );
    const model = makeModel(settings, '0.1.0');
    await model.connect();

    view(model);

    const setup = screen.getByRole('region', { name: 'Model setup' });
    expect(setup.textContent).toContain("c.HdspAgentApp.model = 'llama3.1'");
    expect(setup.textContent).toContain('Ollama');
    expect(setup.textContent).toContain('http://127.0.0.1:11434/v1');
    expect(screen.getByRole('button', { name: 'Use llama3.1' })).toBeTruthy();
    expect(screen.getByRole('button', { name: 'Use qwen2.5' })).toBeTruthy();
    expect(screen.queryByRole('textbox', { name: 'Message' })).toBeNull();
  });
});

describe('ChatView conversation', () => {
  it('streams the answer of the open conversation', async () => {
    const { socket } = await openConversation();
    const [user, start, delta] = simpleTurn();

    act(() => [user, start, delta].forEach(message => socket.deliver(message)));

    expect(await screen.findByText('Hi')).toBeTruthy();
    await waitFor(() =>
      expect(document.querySelector('.jp-hdsp-Markdown')?.textContent).toBe(
        'Hello'
      )
    );
    expect(screen.getByRole('button', { name: 'Stop' })).toBeTruthy();
    expect(screen.getByText('Working…')).toBeTruthy();

    act(() =>
      simpleTurn()
        .slice(3)
        .forEach(message => socket.deliver(message))
    );

    await waitFor(() =>
      expect(document.querySelector('.jp-hdsp-Markdown')?.textContent).toBe(
        'Hello world'
      )
    );
    expect(await screen.findByRole('button', { name: 'Send' })).toBeTruthy();
    expect(screen.queryByText('Working…')).toBeNull();
  });

  it('says when the connection is lost and resumes where it was', async () => {
    const { socket } = await openConversation();
    act(() =>
      simpleTurn()
        .slice(0, 3)
        .forEach(message => socket.deliver(message))
    );

    act(() => socket.drop());
    expect(
      await screen.findByText('Connection lost. Reconnecting…')
    ).toBeTruthy();

    await waitFor(() => expect(FakeSocket.instances).toHaveLength(2));
    const again = FakeSocket.latest();
    act(() => again.accept());
    expect(again.sent[0]).toEqual({ type: 'resume', since_seq: 3 });
    await waitFor(() =>
      expect(screen.queryByText('Connection lost. Reconnecting…')).toBeNull()
    );
  });

  it('asks for approval and sends the answer', async () => {
    const { socket } = await openConversation();
    act(() =>
      [
        event(1, 'message.user', { turn_id: 't', content: 'Run', context: {} }),
        event(2, 'tool.status', {
          call_id: 'c1',
          name: 'run_terminal_command',
          status: 'awaiting_approval',
          arguments: { command: 'pip install polars' }
        }),
        event(3, 'approval.request', {
          request: {
            call_id: 'c1',
            tool: 'run_terminal_command',
            arguments: { command: 'pip install polars' },
            reasons: ['installs packages'],
            preview: 'pip install polars'
          }
        })
      ].forEach(message => socket.deliver(message))
    );

    const dialog = await screen.findByRole('dialog', {
      name: 'Run this command in the terminal?'
    });
    // The agent waits for the user: no "Working…" spinner while it does.
    expect(
      screen.getByText('Waiting for you: allow or deny below')
    ).toBeTruthy();
    expect(screen.queryByText('Working…')).toBeNull();
    fireEvent.click(
      screen.getByRole('button', { name: 'Allow for this chat' })
    );

    await waitFor(() =>
      expect(socket.sent.at(-1)).toMatchObject({
        type: 'approve',
        call_id: 'c1',
        scope: 'session'
      })
    );
    act(() => {
      socket.ok('approve');
      socket.deliver(
        event(4, 'approval.resolved', {
          call_id: 'c1',
          approved: true,
          scope: 'session'
        })
      );
    });
    await waitFor(() => expect(dialog.isConnected).toBe(false));
    expect(screen.getByText('Working…')).toBeTruthy();
    expect(
      screen.queryByText('Waiting for you: allow or deny below')
    ).toBeNull();
  });

  it('stops the turn on Stop', async () => {
    const { socket } = await openConversation();
    act(() =>
      simpleTurn()
        .slice(0, 3)
        .forEach(message => socket.deliver(message))
    );

    fireEvent.click(await screen.findByRole('button', { name: 'Stop' }));

    await waitFor(() =>
      expect(socket.sent.at(-1)).toMatchObject({ type: 'cancel' })
    );
  });

  it('lists the conversations and switches between them', async () => {
    const first = sessionRecord({
      id: 'e'.repeat(32),
      title: 'First',
      updated: 10
    });
    const second = sessionRecord({
      id: 'f'.repeat(32),
      title: 'Second',
      updated: 20
    });
    const { settings } = fakeAgentServer(standardRoutes([first, second]));
    const model = makeModel(settings, '0.1.0');
    await model.connect();
    view(model);
    expect(model.activeSession?.id).toBe(second.id);

    fireEvent.click(screen.getByRole('button', { name: 'History' }));
    const list = await screen.findByRole('list', { name: 'Conversations' });
    expect(
      [...list.querySelectorAll('.jp-hdsp-ConversationList-title')].map(
        n => n.textContent
      )
    ).toEqual(['Second', 'First']);
    fireEvent.click(screen.getByText('First'));

    expect(model.activeSession?.id).toBe(first.id);
    expect(FakeSocket.latest().url).toContain(first.id);
    fireEvent.click(screen.getByRole('button', { name: 'New chat' }));
    expect(model.activeSession).toBeNull();
  });
});
