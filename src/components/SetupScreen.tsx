import { TranslationBundle } from '@jupyterlab/translation';
import * as React from 'react';

import { AgentModel } from '../model';
import { IModelSetupRequest, IModelTestReply, ToolCallMode } from '../tokens';
import { serverText } from '../serverText';
import { ReadinessCard } from './ReadinessCard';

// What a readiness check costs at most (agent/readiness.py MAX_CHECK_TOKENS), said before it runs.
const CHECK_MAX_TOKENS = 300;

// Examples in the empty fields: a URL and a model name, the same in every language.
const EXAMPLE_URL = 'http://127.0.0.1:11434/v1';
const EXAMPLE_MODEL = 'llama3.1';

/**
 * Choosing the model without editing a file: an endpoint URL, a model from the endpoint's own list, a key, a
 * "Test" that shows the endpoint's exact error, and one click for a local server found on this machine. Saved
 * on the server and used at once. When the administrator locks models it says who to ask instead.
 */
export function SetupScreen({
  model,
  trans
}: {
  model: AgentModel;
  trans: TranslationBundle;
}): JSX.Element {
  const overview = model.models;
  const setup = overview?.setup;
  const saved = setup?.saved ?? null;
  const discovered = overview?.discovered ?? [];
  const [baseUrl, setBaseUrl] = React.useState(saved?.base_url ?? '');
  const [modelName, setModelName] = React.useState(saved?.model ?? '');
  const [apiKey, setApiKey] = React.useState('');
  const [toolCalls, setToolCalls] = React.useState<ToolCallMode>(
    saved?.tool_calls ?? 'auto'
  );
  const [completionModel, setCompletionModel] = React.useState(
    saved?.completion_model ?? ''
  );
  const [checked, setChecked] = React.useState<IModelTestReply | null>(null);
  const [listed, setListed] = React.useState<string[]>([]);
  const [notice, setNotice] = React.useState<{
    kind: 'ok' | 'error';
    text: string;
  } | null>(null);
  const [busy, setBusy] = React.useState(false);

  const request = (): IModelSetupRequest => ({
    base_url: baseUrl.trim(),
    model: modelName.trim(),
    tool_calls: toolCalls,
    completion_model: completionModel.trim(),
    ...(apiKey.trim() ? { api_key: apiKey.trim() } : {})
  });

  const run = async (action: () => Promise<void>) => {
    setBusy(true);
    setNotice(null);
    try {
      await action();
    } catch (error) {
      setNotice({ kind: 'error', text: (error as Error).message });
    } finally {
      setBusy(false);
    }
  };

  const listModels = () =>
    run(async () => {
      const reply = await model.listEndpointModels(
        baseUrl.trim(),
        apiKey.trim() || undefined
      );
      setListed(reply.models);
      if (reply.error) {
        setNotice({ kind: 'error', text: reply.error });
      } else if (reply.models.length > 0 && !reply.models.includes(modelName)) {
        setModelName(reply.models[0]);
      }
    });

  const test = () =>
    run(async () => {
      setChecked(null);
      const reply = await model.testModel(request());
      setChecked(reply);
      if (!reply.ok) {
        setNotice({
          kind: 'error',
          text: reply.error
            ? serverText(trans, reply.error, reply.texts)
            : trans.__('The test failed.')
        });
      }
      if (reply.ok && reply.warning) {
        setNotice({
          kind: 'ok',
          text: serverText(trans, reply.warning, reply.texts)
        });
      }
    });

  const save = (choice: IModelSetupRequest = request()) =>
    run(() => model.saveModelSetup(choice));

  if (setup && !setup.allowed) {
    return (
      <div
        className="jp-hdsp-Setup"
        role="region"
        aria-label={trans.__('Model setup')}
      >
        <h3 className="jp-hdsp-Setup-title">{trans.__('Connect a model')}</h3>
        <p>
          {setup.admin_contact
            ? trans.__(
                'Models are set by your administrator. Ask %1 to set one up.',
                setup.admin_contact
              )
            : trans.__(
                'Models are set by your administrator. Ask them to set one up.'
              )}
        </p>
        <button
          type="button"
          className="jp-mod-styled"
          onClick={() => void model.refreshModels()}
        >
          {trans.__('Check again')}
        </button>
      </div>
    );
  }

  const configured = !!overview?.configured;
  return (
    <div
      className="jp-hdsp-Setup"
      role="region"
      aria-label={trans.__('Model setup')}
    >
      <h3 className="jp-hdsp-Setup-title">
        {configured ? trans.__('Manage models') : trans.__('Connect a model')}
      </h3>
      <p>
        {trans.__(
          'hdsp-agent talks to any OpenAI-compatible endpoint: OpenAI, vLLM, Ollama, LM Studio, llama.cpp, a company gateway. The key stays on the server.'
        )}
      </p>
      {!configured && overview?.setup_help && (
        <p className="jp-hdsp-Setup-status">
          {serverText(
            trans,
            overview.setup_help.split('\n')[0],
            overview.texts
          )}
        </p>
      )}
      {discovered.length > 0 && (
        <>
          <h4 className="jp-hdsp-Setup-subtitle">
            {trans.__('Local model servers found on this machine')}
          </h4>
          <ul className="jp-hdsp-Setup-servers">
            {discovered.map(server => (
              <li key={server.base_url}>
                <strong>{server.server}</strong> <code>{server.base_url}</code>
                <div className="jp-hdsp-Setup-models">
                  {server.models.map(name => (
                    <button
                      key={name}
                      type="button"
                      className="jp-mod-styled jp-hdsp-Setup-use"
                      disabled={busy}
                      onClick={() =>
                        void save({ base_url: server.base_url, model: name })
                      }
                    >
                      {trans.__('Use %1', name)}
                    </button>
                  ))}
                </div>
              </li>
            ))}
          </ul>
        </>
      )}
      <form
        className="jp-hdsp-Setup-form"
        onSubmit={event => {
          event.preventDefault();
          void save();
        }}
      >
        <label className="jp-hdsp-Setup-field">
          <span>{trans.__('Endpoint URL')}</span>
          <input
            className="jp-mod-styled"
            type="url"
            required
            placeholder={EXAMPLE_URL}
            value={baseUrl}
            onChange={event => setBaseUrl(event.target.value)}
            onBlur={() =>
              baseUrl.trim() && listed.length === 0 && void listModels()
            }
          />
        </label>
        <label className="jp-hdsp-Setup-field">
          <span>{trans.__('API key')}</span>
          <input
            className="jp-mod-styled"
            type="password"
            autoComplete="off"
            placeholder={
              saved?.key_set && saved.base_url === baseUrl.trim()
                ? trans.__('set (leave empty to keep)')
                : trans.__('none needed for local servers')
            }
            value={apiKey}
            onChange={event => setApiKey(event.target.value)}
          />
        </label>
        <label className="jp-hdsp-Setup-field">
          <span>{trans.__('Model')}</span>
          {listed.length > 0 ? (
            <select
              className="jp-mod-styled"
              value={modelName}
              onChange={event => setModelName(event.target.value)}
            >
              {listed.map(name => (
                <option key={name} value={name}>
                  {name}
                </option>
              ))}
            </select>
          ) : (
            <input
              className="jp-mod-styled"
              required
              placeholder={EXAMPLE_MODEL}
              value={modelName}
              onChange={event => setModelName(event.target.value)}
            />
          )}
        </label>
        <label className="jp-hdsp-Setup-field">
          <span>{trans.__('Tool calls')}</span>
          <select
            className="jp-mod-styled"
            value={toolCalls}
            onChange={event => setToolCalls(event.target.value as ToolCallMode)}
          >
            <option value="auto">
              {trans.__('Automatic (from the readiness check)')}
            </option>
            <option value="native">{trans.__('Native')}</option>
            <option value="text">
              {trans.__('Described in the prompt (text mode)')}
            </option>
          </select>
        </label>
        <label className="jp-hdsp-Setup-field">
          <span>{trans.__('Completion model (optional)')}</span>
          <input
            className="jp-mod-styled"
            placeholder={trans.__('Same as the model')}
            title={trans.__(
              'The model for inline completion in cells, on the same endpoint: a small one answers faster.'
            )}
            value={completionModel}
            onChange={event => setCompletionModel(event.target.value)}
          />
        </label>
        <p className="jp-hdsp-Setup-hint">
          {trans.__(
            'Test checks streaming, tool calls, the context window and the prompt size with two small requests: at most %1 tokens.',
            CHECK_MAX_TOKENS
          )}
        </p>
        <div className="jp-hdsp-Setup-actions">
          <button
            type="button"
            className="jp-mod-styled"
            disabled={busy || !baseUrl.trim()}
            onClick={() => void listModels()}
          >
            {trans.__('List models')}
          </button>
          <button
            type="button"
            className="jp-mod-styled"
            disabled={busy || !baseUrl.trim() || !modelName.trim()}
            onClick={() => void test()}
          >
            {trans.__('Test')}
          </button>
          <button
            type="submit"
            className="jp-mod-styled jp-mod-accept"
            disabled={busy || !baseUrl.trim() || !modelName.trim()}
          >
            {trans.__('Save')}
          </button>
          {configured && (
            <button
              type="button"
              className="jp-mod-styled"
              onClick={() => model.closeSetup()}
            >
              {trans.__('Close')}
            </button>
          )}
        </div>
      </form>
      {checked?.readiness && (
        <ReadinessCard
          report={checked.readiness}
          texts={checked.texts}
          trans={trans}
        />
      )}
      {notice && (
        <div
          className={`jp-hdsp-Setup-notice jp-hdsp-Setup-notice-${notice.kind}`}
          role={notice.kind === 'error' ? 'alert' : 'status'}
        >
          {notice.text}
        </div>
      )}
    </div>
  );
}
