import { ServerConnection } from '@jupyterlab/services';

import { AgentModel } from '../model';
import { IModelsOverview, IServerInfo, ISessionRecord } from '../tokens';
import { FakeSocket } from './fakeSocket';

export const BASE_URL = 'http://localhost:8888/lab-base/';

export const serverInfo = (version: string): IServerInfo => ({
  name: 'hdsp-agent',
  version,
  tools: [
    {
      name: 'ls',
      description: 'List the files and folders in a directory.',
      read_only: true,
      parameters: {
        type: 'object',
        properties: { dirPath: { type: 'string' } }
      }
    },
    {
      name: 'run_terminal_command',
      description: 'Run a shell command in the root directory.',
      read_only: false,
      parameters: {
        type: 'object',
        properties: { command: { type: 'string' } }
      }
    }
  ]
});

/**
 * Server settings whose `fetch` is a jest mock: the request layer above it runs for real.
 */
export function fakeServerSettings(
  reply: (request: Request) => Promise<Response>
): { settings: ServerConnection.ISettings; fetch: jest.Mock } {
  const fetch = jest.fn(reply);
  const settings = ServerConnection.makeSettings({
    baseUrl: BASE_URL,
    wsUrl: 'ws://localhost:8888/lab-base/',
    fetch: fetch as unknown as typeof window.fetch,
    WebSocket: FakeSocket as unknown as typeof WebSocket,
    token: 'secret',
    appendToken: true
  });
  return { settings, fetch };
}

export function jsonResponse(body: unknown, status = 200): Promise<Response> {
  return Promise.resolve(
    new Response(JSON.stringify(body), {
      status,
      headers: { 'Content-Type': 'application/json' }
    })
  );
}

export function serverAnswering(version: string) {
  return fakeServerSettings(() => jsonResponse(serverInfo(version)));
}

export type Handler = (request: Request, body: any) => unknown;

/**
 * A fake hdsp-agent server answering by "METHOD path" (path under /hdsp-agent/, without the query);
 * a handler returns the JSON body, or a Response for anything else. Unknown routes answer 404.
 */
export function fakeAgentServer(handlers: Record<string, Handler>) {
  return fakeServerSettings(async request => {
    const url = new URL(request.url);
    const path = url.pathname.replace(/^\/lab-base\/hdsp-agent\//, '');
    const handler = handlers[`${request.method} ${path}`];
    if (!handler) {
      return jsonResponse(
        { message: `no route ${request.method} ${path}` },
        404
      );
    }
    const text = await request.text();
    const result = await handler(request, text ? JSON.parse(text) : undefined);
    return result instanceof Response ? result : jsonResponse(result);
  });
}

export const SESSION_ID = 'a'.repeat(32);

export function sessionRecord(
  fields: Partial<ISessionRecord> = {}
): ISessionRecord {
  return {
    id: SESSION_ID,
    title: 'New chat',
    created: 100,
    updated: 100,
    model: '',
    status: 'idle',
    ...fields
  };
}

export const configuredModels: IModelsOverview = {
  configured: true,
  models: [
    {
      name: 'scripted',
      model: 'scripted',
      base_url: null,
      context_window: 32768,
      vision: false
    },
    {
      name: 'big',
      model: 'big-model',
      base_url: null,
      context_window: 128000,
      vision: true
    }
  ]
};

/**
 * The routes a connected sidebar calls at start: info, models, sessions.
 */
export function standardRoutes(
  sessions: ISessionRecord[] = [],
  models: IModelsOverview = configuredModels
): Record<string, Handler> {
  return {
    'GET info': () => serverInfo('0.1.0'),
    'GET models': () => models,
    'GET sessions': () => ({ sessions })
  };
}

const models: AgentModel[] = [];

/**
 * A model on the fake server; disposed after each test.
 */
export function makeModel(
  serverSettings: ServerConnection.ISettings,
  frontendVersion?: string,
  options: Partial<AgentModel.IOptions> = {}
): AgentModel {
  const model = new AgentModel({
    serverSettings,
    frontendVersion,
    retryDelays: [5],
    ...options
  });
  models.push(model);
  return model;
}

afterEach(() => {
  models.splice(0).forEach(model => model.dispose());
  FakeSocket.reset();
});
