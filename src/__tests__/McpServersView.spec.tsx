import { nullTranslator } from '@jupyterlab/translation';
import {
  act,
  fireEvent,
  render,
  screen,
  waitFor,
  within
} from '@testing-library/react';
import * as React from 'react';

import { ChatView } from '../components/ChatPanel';
import { IMcpReport } from '../mcpServers';
import {
  fakeAgentServer,
  Handler,
  jsonResponse,
  makeModel,
  standardRoutes
} from './fakeServer';
import { makeCommands, makeRendermime } from './rendermime';

const trans = nullTranslator.load('hdsp_agent');

const STDERR_TAIL =
  'could not start: McpError: Connection closed\nLast stderr lines:\nmissing API key FOO_TOKEN';

function report(fields: Partial<IMcpReport> = {}): IMcpReport {
  return {
    servers: [
      {
        name: 'demo',
        source: 'user',
        transport: 'stdio',
        state: 'connected',
        message: null,
        server_name: 'demo',
        tools: ['demo__echo', 'demo__picture'],
        tool_details: [
          {
            name: 'demo__echo',
            remote_name: 'echo',
            description: 'Repeat the text.',
            auto_approved: true
          },
          {
            name: 'demo__picture',
            remote_name: 'picture',
            description: 'A caption and a tiny image.',
            auto_approved: false
          }
        ],
        auto_approve: ['echo']
      },
      {
        name: 'broken',
        source: 'config',
        transport: 'stdio',
        state: 'error',
        message: STDERR_TAIL,
        tools: [],
        tool_details: []
      },
      { name: 'later', source: 'user', transport: 'http', state: 'idle' },
      { name: 'off', source: 'user', transport: 'stdio', state: 'disabled' },
      {
        name: 'banned',
        source: 'config',
        transport: 'stdio',
        state: 'denied',
        message: 'denied by the administrator (mcp_denied_servers)'
      },
      {
        name: 'proj',
        source: 'project',
        transport: 'stdio',
        state: 'untrusted',
        message: 'not trusted yet',
        launch: 'python serve.py --port 0'
      }
    ],
    project: {
      path: '/home/me/project/.hdsp/mcp.json',
      status: 'untrusted',
      sha256: 'f'.repeat(64)
    },
    problems: [
      {
        source: 'project',
        server: null,
        message: '/home/me/project/.hdsp/mcp.json is not trusted yet'
      }
    ],
    declared_tool_problems: [],
    endpoint: { enabled: true, path: '/hdsp-agent/mcp' },
    ...fields
  };
}

/**
 * A connected sidebar on a fake server whose MCP routes are `mcp`; returns the requests they got.
 */
async function openSidebar(mcp: Record<string, Handler>) {
  const calls: string[] = [];
  const record =
    (handler: Handler): Handler =>
    (request, body) => {
      const url = new URL(request.url);
      // The query without JupyterLab's cache-busting timestamp.
      const refresh = url.searchParams.get('refresh');
      calls.push(
        `${request.method} ${url.pathname.split('/hdsp-agent/')[1]}${
          refresh === null ? '' : `?refresh=${refresh}`
        }`
      );
      return handler(request, body);
    };
  const routes = Object.fromEntries(
    Object.entries(mcp).map(([route, handler]) => [route, record(handler)])
  );
  const { settings } = fakeAgentServer({ ...standardRoutes(), ...routes });
  const model = makeModel(settings, '0.1.0');
  await model.connect();
  const { commands } = makeCommands();
  render(
    <ChatView
      model={model}
      commands={commands}
      rendermime={makeRendermime()}
      trans={trans}
    />
  );
  return { model, calls };
}

function server(name: string): HTMLElement {
  const item = document.querySelector<HTMLElement>(
    `.jp-hdsp-McpServer[data-server="${name}"]`
  );
  if (!item) {
    throw new Error(`no server ${name} shown`);
  }
  return item;
}

describe('MCP servers view', () => {
  it('shows each server state and the tools of the connected one', async () => {
    const { calls } = await openSidebar({ 'GET mcp/servers': () => report() });

    fireEvent.click(screen.getByRole('button', { name: 'MCP' }));

    const tools = await screen.findByRole('list', { name: 'Tools of demo' });
    expect(
      within(tools)
        .getAllByRole('listitem')
        .map(item => item.querySelector('code')?.textContent)
    ).toEqual(['echo', 'picture']);
    expect(within(tools).getAllByText('autoApprove')).toHaveLength(1);
    expect(within(server('demo')).getByText('connected')).toBeTruthy();
    expect(within(server('demo')).getByText('your mcp.json')).toBeTruthy();

    const failure = within(server('broken')).getByRole('alert');
    expect(failure.textContent).toBe(STDERR_TAIL);
    expect(within(server('broken')).getByText('failed')).toBeTruthy();
    expect(within(server('later')).getByText('not started')).toBeTruthy();
    expect(within(server('off')).getByText('disabled')).toBeTruthy();
    expect(
      within(server('banned')).getByText(
        'The administrator does not allow this server.'
      )
    ).toBeTruthy();
    expect(within(server('proj')).getByText('not trusted')).toBeTruthy();
    expect(
      within(server('proj')).getByText('Would start: python serve.py --port 0')
    ).toBeTruthy();
    expect(screen.getByText('1 configuration problem')).toBeTruthy();

    // The state as it is first (instant), then the servers connected (programs start).
    await waitFor(() =>
      expect(calls).toEqual([
        'GET mcp/servers?refresh=0',
        'GET mcp/servers?refresh=1'
      ])
    );
  });

  it('shows tool descriptions with the tool-details preference', async () => {
    const { model } = await openSidebar({ 'GET mcp/servers': () => report() });
    act(() => {
      model.preferences = { ...model.preferences, showToolDetails: true };
    });

    fireEvent.click(screen.getByRole('button', { name: 'MCP' }));

    expect(await screen.findByText('Repeat the text.')).toBeTruthy();
  });

  it('trusts the project file as shown, then lists its servers', async () => {
    let trusted = false;
    const posted: unknown[] = [];
    const trustedReport = report({
      project: {
        path: '/home/me/project/.hdsp/mcp.json',
        status: 'trusted',
        sha256: 'f'.repeat(64)
      },
      servers: [
        {
          name: 'proj',
          source: 'project',
          transport: 'stdio',
          state: 'connected',
          tools: ['proj__echo'],
          tool_details: [
            {
              name: 'proj__echo',
              remote_name: 'echo',
              description: 'Repeat the text.',
              auto_approved: false
            }
          ]
        }
      ],
      problems: []
    });
    const { calls } = await openSidebar({
      'GET mcp/servers': () => (trusted ? trustedReport : report()),
      'POST mcp/trust': (_request, body) => {
        posted.push(body);
        trusted = true;
        return { project: { status: 'trusted' } };
      }
    });
    fireEvent.click(screen.getByRole('button', { name: 'MCP' }));
    const trust = await screen.findByRole('button', {
      name: 'Trust this project file'
    });
    expect(
      screen.getByText(/\.hdsp\/mcp\.json configures MCP servers/)
    ).toBeTruthy();
    await waitFor(() => expect(calls).toHaveLength(2));

    fireEvent.click(trust);

    expect(
      await screen.findByRole('list', { name: 'Tools of proj' })
    ).toBeTruthy();
    expect(posted).toEqual([{ sha256: 'f'.repeat(64) }]);
    expect(calls.slice(2)).toEqual([
      'POST mcp/trust',
      'GET mcp/servers?refresh=1'
    ]);
    expect(
      screen.queryByRole('button', { name: 'Trust this project file' })
    ).toBeNull();
  });

  it('says why trusting failed (the file changed since it was shown)', async () => {
    await openSidebar({
      'GET mcp/servers': () => report(),
      'POST mcp/trust': () =>
        jsonResponse(
          { message: 'the file changed since it was shown; review it again' },
          409
        )
    });
    fireEvent.click(screen.getByRole('button', { name: 'MCP' }));
    fireEvent.click(
      await screen.findByRole('button', { name: 'Trust this project file' })
    );

    expect(
      (await screen.findByText(/changed since it was shown/)).getAttribute(
        'role'
      )
    ).toBe('alert');
  });

  it('refreshes on demand and explains an empty configuration', async () => {
    let configured = false;
    const { calls } = await openSidebar({
      'GET mcp/servers': () =>
        configured
          ? report()
          : report({ servers: [], project: null, problems: [] })
    });
    fireEvent.click(screen.getByRole('button', { name: 'MCP' }));
    expect(
      await screen.findByText(/No MCP servers are configured/)
    ).toBeTruthy();
    const refresh = screen.getByRole('button', { name: 'Refresh MCP servers' });
    await waitFor(() => expect(refresh.hasAttribute('disabled')).toBe(false));

    configured = true;
    fireEvent.click(refresh);

    expect(
      await screen.findByRole('list', { name: 'Tools of demo' })
    ).toBeTruthy();
    expect(calls[calls.length - 1]).toBe('GET mcp/servers?refresh=1');
  });

  it('reports a server that cannot be reached and closes with its button', async () => {
    await openSidebar({
      'GET mcp/servers': () => jsonResponse({ message: 'boom' }, 500),
      // The drawer also lists skills: none here, so the only alert is the servers'.
      'GET skills': () => ({ skills: [] })
    });
    const button = screen.getByRole('button', { name: 'MCP' });
    fireEvent.click(button);
    expect((await screen.findByRole('alert')).textContent).toBe('boom');
    expect(button.getAttribute('aria-pressed')).toBe('true');

    fireEvent.click(button);

    expect(screen.queryByRole('region', { name: 'MCP servers' })).toBeNull();
    expect(button.getAttribute('aria-pressed')).toBe('false');
  });
});
