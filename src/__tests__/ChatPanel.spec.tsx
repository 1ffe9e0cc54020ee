import { nullTranslator } from '@jupyterlab/translation';
import { act, fireEvent, render, screen } from '@testing-library/react';
import * as React from 'react';

import { ChatView } from '../components/ChatPanel';
import {
  fakeServerSettings,
  jsonResponse,
  makeModel,
  serverAnswering
} from './fakeServer';

const trans = nullTranslator.load('hdsp_agent');

describe('ChatView', () => {
  it('shows the server version and its tools when connected', async () => {
    const { settings } = serverAnswering('0.1.0');
    const model = makeModel(settings, '0.1.0');
    await model.connect();

    render(<ChatView model={model} trans={trans} />);

    expect(screen.getByRole('heading', { name: 'hdsp-agent' })).toBeTruthy();
    expect(
      screen.getByText('Connected to hdsp-agent server 0.1.0 · 2 tools')
    ).toBeTruthy();
    expect(screen.getByText('ls')).toBeTruthy();
    expect(screen.getByText('run_terminal_command')).toBeTruthy();
    expect(screen.queryByRole('alert')).toBeNull();
  });

  it('re-renders when the model connects after mounting', async () => {
    const { settings } = serverAnswering('0.1.0');
    const model = makeModel(settings, '0.1.0');

    render(<ChatView model={model} trans={trans} />);
    expect(
      screen.getByText('Connecting to the hdsp-agent server…')
    ).toBeTruthy();
    await act(() => model.connect());

    expect(
      await screen.findByText(/^Connected to hdsp-agent server 0\.1\.0/)
    ).toBeTruthy();
  });

  it('shows tool descriptions only when the preference asks for them', async () => {
    const { settings } = serverAnswering('0.1.0');
    const model = makeModel(settings, '0.1.0');
    await model.connect();
    const description = 'List the files and folders in a directory.';

    render(<ChatView model={model} trans={trans} />);
    expect(screen.queryByText(description)).toBeNull();
    act(() => {
      model.preferences = { ...model.preferences, showToolDetails: true };
    });

    expect(screen.getByText(description)).toBeTruthy();
  });

  it('shows a version mismatch as an error with both versions', async () => {
    const { settings } = serverAnswering('0.2.0');
    const model = makeModel(settings, '0.1.0');
    await model.connect();

    render(<ChatView model={model} trans={trans} />);

    expect(screen.getByRole('alert').textContent).toContain(
      'Version mismatch: frontend 0.1.0, server 0.2.0 — reinstall hdsp-agent and restart JupyterLab'
    );
    expect(screen.queryByText(/^Connected/)).toBeNull();
    expect(screen.queryByText('ls')).toBeNull();
  });

  it('shows an unreachable server as an error and retries on request', async () => {
    let up = false;
    const { settings, fetch } = fakeServerSettings(() =>
      up
        ? jsonResponse({ name: 'hdsp-agent', version: '0.1.0', tools: [] })
        : Promise.reject(new TypeError('Failed to fetch'))
    );
    const model = makeModel(settings, '0.1.0');
    await model.connect();

    render(<ChatView model={model} trans={trans} />);
    expect(screen.getByRole('alert').textContent).toContain(
      'Cannot reach the hdsp-agent server'
    );

    up = true;
    fireEvent.click(screen.getByRole('button', { name: 'Retry' }));

    expect(
      await screen.findByText('Connected to hdsp-agent server 0.1.0 · 0 tools')
    ).toBeTruthy();
    expect(fetch).toHaveBeenCalledTimes(2);
  });

  it('explains a missing server extension', async () => {
    const { settings } = fakeServerSettings(() =>
      jsonResponse({ message: 'Not Found' }, 404)
    );
    const model = makeModel(settings, '0.1.0');
    await model.connect();

    render(<ChatView model={model} trans={trans} />);

    expect(screen.getByRole('alert').textContent).toContain(
      'jupyter server extension list'
    );
  });
});
