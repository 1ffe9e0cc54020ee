import { TranslationBundle } from '@jupyterlab/translation';
import * as React from 'react';

import { AgentModel } from '../model';
import { ISandboxInfo, IServerInfo } from '../tokens';
import { serverText } from '../serverText';

/**
 * While the handshake runs or after it failed: what is wrong and a retry button.
 */
export function ServerStatus({
  model,
  trans
}: {
  model: AgentModel;
  trans: TranslationBundle;
}): JSX.Element {
  const { error } = model;
  if (model.status === 'error' && error) {
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
  return (
    <div className="jp-hdsp-Status" role="status">
      {trans.__('Connecting to the hdsp-agent server…')}
    </div>
  );
}

/**
 * A line at the top of the chat while shell commands run without the OS sandbox: the user should
 * know that each one will ask (or, when the admin requires the sandbox, will not run).
 */
export function SandboxNotice({
  sandbox,
  trans
}: {
  sandbox: ISandboxInfo | undefined;
  trans: TranslationBundle;
}): JSX.Element | null {
  if (!sandbox || sandbox.active) {
    return null;
  }
  const reason =
    serverText(trans, sandbox.reason, sandbox.texts)
      .trim()
      .replace(/[.。]+$/, '') || trans.__('no sandbox is available');
  return (
    <div
      className="jp-hdsp-SandboxNotice"
      role="note"
      data-layer={sandbox.layer}
    >
      {sandbox.required
        ? trans.__(
            'Sandbox off: %1. Shell commands will not run: the administrator requires the sandbox.',
            reason
          )
        : trans.__('Sandbox off: %1. Shell commands will ask first.', reason)}
    </div>
  );
}

/**
 * The server version and its tools, folded away at the bottom of the panel.
 */
export function ServerInfo({
  serverInfo,
  showDetails,
  trans
}: {
  serverInfo: IServerInfo;
  showDetails: boolean;
  trans: TranslationBundle;
}): JSX.Element {
  const { tools } = serverInfo;
  return (
    <details className="jp-hdsp-ServerInfo">
      <summary role="status">
        {trans._n(
          'Connected to hdsp-agent server %2 · %1 tool',
          'Connected to hdsp-agent server %2 · %1 tools',
          tools.length,
          serverInfo.version
        )}
      </summary>
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
    </details>
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
