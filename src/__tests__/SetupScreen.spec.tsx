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
import { IModelsOverview } from '../tokens';
import {
  configuredModels,
  fakeAgentServer,
  makeModel,
  standardRoutes
} from './fakeServer';
import { makeCommands, makeRendermime } from './rendermime';

const trans = nullTranslator.load('hdsp_agent');

const notConfigured: IModelsOverview = {
  configured: false,
  models: [],
  setup_help: 'No model is configured.',
  discovered: [
    {
      server: 'Ollama',
      base_url: 'http://127.0.0.1:11434/v1',
      models: ['llama3.1']
    }
  ],
  setup: { allowed: true, admin_contact: '', saved: null }
};

const afterSave: IModelsOverview = {
  ...configuredModels,
  setup: {
    allowed: true,
    admin_contact: '',
    saved: {
      base_url: 'http://127.0.0.1:9999/v1',
      model: 'qwen',
      key_set: true
    }
  }
};

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

async function open(
  routes: Record<string, (request: Request, body: any) => unknown>
) {
  const server = fakeAgentServer(routes);
  const model = makeModel(server.settings, '0.1.0');
  await act(() => model.connect());
  view(model);
  return { model, fetch: server.fetch };
}

describe('SetupScreen', () => {
  it('uses a discovered local server and model in one click, and the chat opens', async () => {
    const saved: any[] = [];
    await open({
      ...standardRoutes([], notConfigured),
      'PUT model-setup': (_request, body) => {
        saved.push(body);
        return configuredModels;
      }
    });
    fireEvent.click(screen.getByRole('button', { name: 'Use llama3.1' }));
    await waitFor(() =>
      expect(screen.getByRole('textbox', { name: 'Message' })).toBeTruthy()
    );
    expect(saved).toEqual([
      { base_url: 'http://127.0.0.1:11434/v1', model: 'llama3.1' }
    ]);
  });

  it('lists the endpoint models, shows the exact test error, and saves the key one way', async () => {
    const requests: Record<string, any[]> = { list: [], test: [], save: [] };
    await open({
      ...standardRoutes([], notConfigured),
      'POST model-setup/models': (_request, body) => {
        requests.list.push(body);
        return { base_url: body.base_url, models: ['qwen', 'llama'] };
      },
      'POST model-setup/test': (_request, body) => {
        requests.test.push(body);
        return {
          ok: false,
          error:
            'http://127.0.0.1:9999/v1/chat/completions answered HTTP 401: bad key'
        };
      },
      'PUT model-setup': (_request, body) => {
        requests.save.push(body);
        return afterSave;
      }
    });
    fireEvent.change(screen.getByLabelText('Endpoint URL'), {
      target: { value: 'http://127.0.0.1:9999/v1' }
    });
    fireEvent.change(screen.getByLabelText('API key'), {
      target: { value: 'sk-typed' }
    });
    fireEvent.click(screen.getByRole('button', { name: 'List models' }));
    await waitFor(() =>
      expect(screen.getByRole('option', { name: 'llama' })).toBeTruthy()
    );
    expect((screen.getByLabelText('Model') as HTMLSelectElement).value).toBe(
      'qwen'
    );

    fireEvent.click(screen.getByRole('button', { name: 'Test' }));
    expect((await screen.findByRole('alert')).textContent).toContain(
      'answered HTTP 401: bad key'
    );

    fireEvent.click(screen.getByRole('button', { name: 'Save' }));
    await waitFor(() =>
      expect(screen.getByRole('textbox', { name: 'Message' })).toBeTruthy()
    );
    expect(requests.list).toEqual([
      { base_url: 'http://127.0.0.1:9999/v1', api_key: 'sk-typed' }
    ]);
    expect(requests.save).toEqual([
      {
        base_url: 'http://127.0.0.1:9999/v1',
        model: 'qwen',
        tool_calls: 'auto',
        // Empty: completions use the chat model (and a completion model saved before is cleared).
        completion_model: '',
        api_key: 'sk-typed'
      }
    ]);
  });

  it('says what Test costs, shows each verdict with its next action, and saves the tool-call mode', async () => {
    const tested: any[] = [];
    const saved: any[] = [];
    const readiness = {
      model: 'smol',
      base_url: 'http://127.0.0.1:8080/v1',
      streaming: 'streamed',
      tools: 'none',
      tool_mode: 'text',
      context_window: 8192,
      window_source: 'server',
      profile: 'compact',
      prompt_tokens: 1900,
      checked_at: 1,
      max_tokens: 300,
      verdict: 'warn',
      lines: [
        {
          check: 'streaming',
          verdict: 'ok',
          text: 'Streaming works: the answer arrives as it is written.',
          action: ''
        },
        {
          check: 'tools',
          verdict: 'warn',
          text: 'This model cannot call tools natively: it answered in prose.',
          action: 'hdsp-agent will describe the tools in the prompt'
        },
        {
          check: 'window',
          verdict: 'ok',
          text: 'Context window: 8,192 tokens, as the server reports.',
          action: ''
        },
        {
          check: 'prompt',
          verdict: 'ok',
          text: 'The compact tool profile sends about 1,900 tokens before any conversation: 23 % of the window.',
          action: ''
        }
      ]
    };
    await open({
      ...standardRoutes([], notConfigured),
      'POST model-setup/test': (_request, body) => {
        tested.push(body);
        return { ok: true, readiness, texts: {} };
      },
      'PUT model-setup': (_request, body) => {
        saved.push(body);
        return afterSave;
      }
    });
    expect(
      screen.getByText(/two small requests: at most 300 tokens/)
    ).toBeTruthy();
    fireEvent.change(screen.getByLabelText('Endpoint URL'), {
      target: { value: 'http://127.0.0.1:8080/v1' }
    });
    fireEvent.change(screen.getByLabelText('Model'), {
      target: { value: 'smol' }
    });
    fireEvent.click(screen.getByRole('button', { name: 'Test' }));
    const card = await screen.findByRole('status', { name: 'Readiness check' });
    const tools = card.querySelector('[data-check="tools"]')!;
    expect(tools.textContent).toContain('cannot call tools natively');
    expect(tools.textContent).toContain('describe the tools in the prompt');
    expect(card.textContent).toContain('8,192 tokens, as the server reports');
    expect(card.textContent).toContain(
      'Tool calls: described in the prompt (text mode)'
    );
    fireEvent.change(screen.getByLabelText('Tool calls'), {
      target: { value: 'text' }
    });
    fireEvent.click(screen.getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(saved.length).toBe(1));
    expect(tested[0].tool_calls).toBe('auto');
    expect(saved[0].tool_calls).toBe('text');
  });

  it('names who to ask when the administrator locked models, with no form', async () => {
    await open(
      standardRoutes([], {
        ...notConfigured,
        setup: {
          allowed: false,
          admin_contact: 'ml-platform@corp',
          saved: null
        }
      })
    );
    const region = screen.getByRole('region', { name: 'Model setup' });
    expect(region.textContent).toContain('Ask ml-platform@corp to set one up.');
    expect(screen.queryByLabelText('Endpoint URL')).toBeNull();
  });

  it('says in the model picker that the administrator set the model, with no way to add one', async () => {
    await open(
      standardRoutes([], {
        ...configuredModels,
        setup: {
          allowed: false,
          admin_contact: 'ml-platform@corp',
          saved: null
        }
      })
    );
    const picker = screen.getByRole('combobox', { name: 'Model' });
    expect(picker.title).toBe('The model is set by your administrator');
    const options = Array.from(picker.querySelectorAll('option')).map(
      option => option.textContent
    );
    expect(options).toContain('Set by your administrator');
    expect(options).not.toContain('Manage models…');
  });

  it('opens from the model picker as "Manage models…" and never shows the saved key', async () => {
    await open(standardRoutes([], afterSave));
    fireEvent.change(screen.getByRole('combobox', { name: 'Model' }), {
      target: { value: '\u0000manage-models' }
    });
    const region = await screen.findByRole('region', { name: 'Model setup' });
    expect(region.textContent).toContain('Manage models');
    expect(
      (screen.getByLabelText('Endpoint URL') as HTMLInputElement).value
    ).toBe('http://127.0.0.1:9999/v1');
    const key = screen.getByLabelText('API key') as HTMLInputElement;
    expect(key.value).toBe('');
    expect(key.placeholder).toBe('set (leave empty to keep)');
    fireEvent.click(screen.getByRole('button', { name: 'Close' }));
    await waitFor(() =>
      expect(screen.queryByRole('region', { name: 'Model setup' })).toBeNull()
    );
  });

  it("shows each model's latest readiness verdict in the model picker", async () => {
    const checked = {
      verdict: 'warn',
      tool_mode: 'text',
      lines: [
        {
          check: 'tools',
          verdict: 'warn',
          text: 'This model cannot call tools natively: it answered in prose.',
          action: ''
        }
      ]
    } as any;
    await open(
      standardRoutes([], {
        ...afterSave,
        models: [
          { ...configuredModels.models[0], readiness: checked },
          configuredModels.models[1]
        ]
      })
    );
    const picker = screen.getByRole('combobox', { name: 'Model' });
    const options = Array.from(picker.querySelectorAll('option')).map(
      option => option.textContent
    );
    expect(options[0]).toBe('scripted · ! text tool calls');
    expect(options[1]).toBe('big');
    expect(picker.querySelector('option')!.title).toContain(
      'cannot call tools natively'
    );
  });
});
