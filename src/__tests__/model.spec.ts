import { AgentModel } from '../model';
import {
  BASE_URL,
  fakeServerSettings,
  jsonResponse,
  makeModel,
  serverAnswering
} from './fakeServer';

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

    expect(fetch).toHaveBeenCalledTimes(1);
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
    model.stateChanged.connect(() => seen.push(model.status));

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
