import { TranslationBundle } from '@jupyterlab/translation';
import { ReactWidget } from '@jupyterlab/ui-components';
import * as React from 'react';

import { AgentModel } from '../model';
import { IToolInfo } from '../tokens';

export interface IChatViewProps {
  model: AgentModel;
  trans: TranslationBundle;
}

/**
 * The sidebar's content: connection status and tools for now; the chat arrives with the agent loop.
 */
export function ChatView({ model, trans }: IChatViewProps): JSX.Element {
  useModelState(model);

  return (
    <div className="jp-hdsp-ChatPanel">
      <header className="jp-hdsp-ChatPanel-header">
        <h2 className="jp-hdsp-ChatPanel-title">{trans.__('hdsp-agent')}</h2>
      </header>
      <ConnectionStatus model={model} trans={trans} />
      <textarea
        className="jp-hdsp-ChatPanel-input"
        disabled
        placeholder={trans.__('Chat arrives with the agent loop')}
        aria-label={trans.__('Message')}
      />
    </div>
  );
}

function ConnectionStatus({ model, trans }: IChatViewProps): JSX.Element {
  const { status, serverInfo, error } = model;

  if (status === 'connecting') {
    return (
      <div className="jp-hdsp-Status" role="status">
        {trans.__('Connecting to the hdsp-agent server…')}
      </div>
    );
  }

  if (status === 'error' && error) {
    return (
      <div className="jp-hdsp-Error" role="alert">
        <p>{describeError(error, trans)}</p>
        <button
          className="jp-mod-styled jp-mod-accept"
          onClick={() => void model.connect()}
        >
          {trans.__('Retry')}
        </button>
      </div>
    );
  }

  const tools = serverInfo?.tools ?? [];
  return (
    <div className="jp-hdsp-Status" role="status">
      <p className="jp-hdsp-Status-line">
        {trans._n(
          'Connected to hdsp-agent server %2 · %1 tool',
          'Connected to hdsp-agent server %2 · %1 tools',
          tools.length,
          serverInfo?.version ?? ''
        )}
      </p>
      <ToolList
        tools={tools}
        showDetails={model.preferences.showToolDetails}
        trans={trans}
      />
    </div>
  );
}

function ToolList({
  tools,
  showDetails,
  trans
}: {
  tools: IToolInfo[];
  showDetails: boolean;
  trans: TranslationBundle;
}): JSX.Element {
  return (
    <ul className="jp-hdsp-ToolList" aria-label={trans.__('Tools')}>
      {tools.map(tool => (
        <li
          key={tool.name}
          className="jp-hdsp-ToolList-item"
          title={tool.description}
        >
          <code className="jp-hdsp-ToolList-name">{tool.name}</code>
          {tool.read_only && (
            <span className="jp-hdsp-ToolList-badge">
              {trans.__('read-only')}
            </span>
          )}
          {showDetails && (
            <div className="jp-hdsp-ToolList-description">
              {tool.description}
            </div>
          )}
        </li>
      ))}
    </ul>
  );
}

function describeError(
  error: AgentModel.ConnectionError,
  trans: TranslationBundle
): string {
  if (error.kind === 'version-mismatch') {
    return trans.__(
      'Version mismatch: frontend %1, server %2 — reinstall hdsp-agent and restart JupyterLab',
      error.frontendVersion,
      error.serverVersion
    );
  }
  if (error.httpStatus === 404) {
    return trans.__(
      'The hdsp-agent server extension is not running (404). Check that `jupyter server extension list` shows hdsp_agent enabled, then restart JupyterLab.'
    );
  }
  return trans.__('Cannot reach the hdsp-agent server: %1', error.detail);
}

/**
 * Re-render whenever the model's state changes.
 */
function useModelState(model: AgentModel): void {
  const [, setVersion] = React.useState(0);
  React.useEffect(() => {
    const onChange = () => setVersion(version => version + 1);
    model.stateChanged.connect(onChange);
    return () => {
      model.stateChanged.disconnect(onChange);
    };
  }, [model]);
}

/**
 * The right-sidebar widget hosting {@link ChatView}.
 */
export class ChatPanel extends ReactWidget {
  constructor(options: IChatViewProps) {
    super();
    this._model = options.model;
    this._trans = options.trans;
    this.addClass('jp-hdsp-ChatPanel-widget');
  }

  protected render(): JSX.Element {
    return <ChatView model={this._model} trans={this._trans} />;
  }

  private _model: AgentModel;
  private _trans: TranslationBundle;
}
