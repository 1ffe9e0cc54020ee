import { ServerConnection } from '@jupyterlab/services';

import { AgentModel } from '../model';
import { IServerInfo } from '../tokens';

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
    fetch: fetch as unknown as typeof window.fetch
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

const models: AgentModel[] = [];

/**
 * A model on the fake server; disposed after each test.
 */
export function makeModel(
  serverSettings: ServerConnection.ISettings,
  frontendVersion?: string
): AgentModel {
  const model = new AgentModel({ serverSettings, frontendVersion });
  models.push(model);
  return model;
}

afterEach(() => {
  models.splice(0).forEach(model => model.dispose());
});
