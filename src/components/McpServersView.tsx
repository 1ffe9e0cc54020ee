import { TranslationBundle } from '@jupyterlab/translation';
import { refreshIcon } from '@jupyterlab/ui-components';
import * as React from 'react';

import {
  IMcpProblem,
  IMcpReport,
  IMcpServerStatus,
  McpServers,
  McpServerState,
  McpServerSource
} from '../mcpServers';
import { useSignals } from './hooks';

export interface IMcpServersViewProps {
  servers: McpServers;
  /** Show each tool's description under its name (the "show tool details" preference). */
  showDetails: boolean;
  trans: TranslationBundle;
}

/**
 * The MCP servers the agent uses: each one's state (with why it failed) and its tools, a refresh,
 * and the trust of the project's .hdsp/mcp.json. Opening the view connects the servers.
 */
export function McpServersView(props: IMcpServersViewProps): JSX.Element {
  const { servers, trans } = props;
  useSignals([servers.changed]);
  React.useEffect(() => {
    void servers.open();
  }, [servers]);
  const report = servers.report;
  return (
    <section
      className="jp-hdsp-McpServers"
      aria-label={trans.__('MCP servers')}
      aria-busy={servers.loading}
    >
      <div className="jp-hdsp-McpServers-header">
        <span className="jp-hdsp-McpServers-title">
          {trans.__('MCP servers')}
        </span>
        {servers.loading && (
          <span
            className="jp-hdsp-Spinner"
            role="status"
            aria-label={trans.__('Connecting the MCP servers…')}
          />
        )}
        <button
          type="button"
          className="jp-hdsp-ConversationList-action"
          aria-label={trans.__('Refresh MCP servers')}
          title={trans.__(
            'Read the configuration again and connect the servers (failed ones are tried again)'
          )}
          disabled={servers.loading}
          onClick={() => void servers.load(true)}
        >
          <refreshIcon.react tag="span" elementSize="small" />
        </button>
      </div>
      {servers.error && (
        <div className="jp-hdsp-Error" role="alert">
          {servers.error}
        </div>
      )}
      {report && (
        <ReportView
          report={report}
          showDetails={props.showDetails}
          busy={servers.loading}
          onTrust={() => void servers.trustProject()}
          trans={trans}
        />
      )}
    </section>
  );
}

function ReportView(props: {
  report: IMcpReport;
  showDetails: boolean;
  busy: boolean;
  onTrust: () => void;
  trans: TranslationBundle;
}): JSX.Element {
  const { report, trans } = props;
  const project = report.project;
  const problems = [...report.problems, ...report.declared_tool_problems];
  return (
    <>
      {project &&
        (project.status === 'untrusted' || project.status === 'changed') && (
          <div className="jp-hdsp-Notice jp-mod-warning">
            <div>
              {project.status === 'changed'
                ? trans.__(
                    '%1 changed since you trusted it: its servers are stopped until you trust it again.',
                    project.path
                  )
                : trans.__(
                    '%1 configures MCP servers for this project. They are not started until you trust the file: a server is a program that runs on this machine.',
                    project.path
                  )}
            </div>
            <button
              type="button"
              className="jp-mod-styled jp-mod-warn jp-hdsp-McpServers-trust"
              disabled={props.busy}
              onClick={props.onTrust}
            >
              {trans.__('Trust this project file')}
            </button>
          </div>
        )}
      {report.servers.length === 0 ? (
        <div className="jp-hdsp-McpServers-empty">
          {trans.__(
            'No MCP servers are configured. Add them to hdsp_agent/mcp.json in your Jupyter config folder, or to .hdsp/mcp.json in the project, in the common "mcpServers" format.'
          )}
        </div>
      ) : (
        <ul className="jp-hdsp-McpServers-list">
          {report.servers.map(server => (
            <ServerItem
              key={server.name}
              server={server}
              showDetails={props.showDetails}
              trans={trans}
            />
          ))}
        </ul>
      )}
      {problems.length > 0 && (
        <details className="jp-hdsp-McpServers-problems">
          <summary>
            {trans._n(
              '%1 configuration problem',
              '%1 configuration problems',
              problems.length
            )}
          </summary>
          <ul>
            {problems.map((problem, index) => (
              <li key={index}>{problemText(problem)}</li>
            ))}
          </ul>
        </details>
      )}
    </>
  );
}

function ServerItem(props: {
  server: IMcpServerStatus;
  showDetails: boolean;
  trans: TranslationBundle;
}): JSX.Element {
  const { server, trans } = props;
  const tools = server.tool_details ?? [];
  return (
    <li
      className="jp-hdsp-McpServer"
      data-server={server.name}
      data-state={server.state}
    >
      <div className="jp-hdsp-McpServer-header">
        <span className="jp-hdsp-McpServer-name">{server.name}</span>
        <span
          className={`jp-hdsp-McpServer-state jp-mod-${server.state}`}
          title={stateDescription(server.state, trans)}
        >
          {stateLabel(server.state, trans)}
        </span>
        <span className="jp-hdsp-McpServer-source">
          {sourceLabel(server.source, trans)}
        </span>
      </div>
      {server.state === 'error' && server.message && (
        <pre className="jp-hdsp-McpServer-message" role="alert">
          {server.message}
        </pre>
      )}
      {server.state === 'untrusted' && server.launch && (
        <div className="jp-hdsp-McpServer-launch">
          {trans.__('Would start: %1', server.launch)}
        </div>
      )}
      {server.state === 'denied' && (
        <div className="jp-hdsp-McpServer-launch">
          {trans.__('The administrator does not allow this server.')}
        </div>
      )}
      {server.state === 'connected' && tools.length === 0 && (
        <div className="jp-hdsp-McpServer-launch">
          {trans.__('This server offers no tools.')}
        </div>
      )}
      {tools.length > 0 && (
        <ul
          className="jp-hdsp-ToolList"
          aria-label={trans.__('Tools of %1', server.name)}
        >
          {tools.map(tool => (
            <li
              key={tool.name}
              className="jp-hdsp-ToolList-item"
              title={`${tool.name}\n${tool.description}`}
            >
              <code className="jp-hdsp-ToolList-name">{tool.remote_name}</code>
              {tool.auto_approved && (
                <span
                  className="jp-hdsp-ToolList-badge"
                  title={trans.__(
                    "Listed in the server's autoApprove: runs without asking"
                  )}
                >
                  {trans.__('autoApprove')}
                </span>
              )}
              {props.showDetails && tool.description && (
                <div className="jp-hdsp-ToolList-description">
                  {tool.description}
                </div>
              )}
            </li>
          ))}
        </ul>
      )}
      {(server.skipped_tools ?? []).map(reason => (
        <div key={reason} className="jp-hdsp-McpServer-launch">
          {trans.__('Not offered: %1', reason)}
        </div>
      ))}
    </li>
  );
}

function problemText(problem: IMcpProblem): string {
  return problem.server
    ? `${problem.server}: ${problem.message}`
    : problem.message;
}

export function stateLabel(
  state: McpServerState,
  trans: TranslationBundle
): string {
  switch (state) {
    case 'idle':
      return trans.__('not started');
    case 'connecting':
      return trans.__('starting');
    case 'connected':
      return trans.__('connected');
    case 'error':
      return trans.__('failed');
    case 'closed':
      return trans.__('stopped');
    case 'disabled':
      return trans.__('disabled');
    case 'denied':
      return trans.__('denied');
    case 'untrusted':
      return trans.__('not trusted');
  }
}

function stateDescription(
  state: McpServerState,
  trans: TranslationBundle
): string {
  switch (state) {
    case 'idle':
      return trans.__('Starts when the agent first needs its tools');
    case 'error':
      return trans.__(
        'Could not start or stopped unexpectedly; it is started again on next use'
      );
    case 'disabled':
      return trans.__('"disabled": true in its configuration');
    case 'denied':
      return trans.__("Listed in the administrator's mcp_denied_servers");
    case 'untrusted':
      return trans.__('In the project file, which you have not trusted');
    default:
      return stateLabel(state, trans);
  }
}

function sourceLabel(
  source: McpServerSource,
  trans: TranslationBundle
): string {
  switch (source) {
    case 'user':
      return trans.__('your mcp.json');
    case 'config':
      return trans.__('Jupyter config');
    case 'project':
      return trans.__('project');
  }
}
