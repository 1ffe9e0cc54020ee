/**
 * Every call to the server's hdsp-agent routes (`hdsp_agent/web/`), one function each; `request.ts`
 * does the fetch. The reply types live in tokens.ts.
 */
import { URLExt } from '@jupyterlab/coreutils';
import { ServerConnection } from '@jupyterlab/services';

import { requestAPI, requestText } from './request';
import {
  API_NAMESPACE,
  ExportFormat,
  IEventsPage,
  IMcpReport,
  IModelsOverview,
  IServerInfo,
  ISessionDetail,
  ISessionList,
  ISessionRecord,
  IUndoReply
} from './tokens';

/**
 * `GET /hdsp-agent/info`: the server version and its tool catalog.
 *
 * @throws Error when the reply does not have the expected shape
 */
export async function fetchServerInfo(
  serverSettings: ServerConnection.ISettings
): Promise<IServerInfo> {
  const reply = await requestAPI<IServerInfo>('info', serverSettings);
  if (
    typeof reply !== 'object' ||
    reply === null ||
    typeof reply.version !== 'string' ||
    !Array.isArray(reply.tools)
  ) {
    throw new Error('Unexpected reply from /hdsp-agent/info');
  }
  return reply;
}

/**
 * `GET /hdsp-agent/models`: the configured models, or how to set one up.
 */
export async function fetchModels(
  serverSettings: ServerConnection.ISettings
): Promise<IModelsOverview> {
  const reply = await requestAPI<IModelsOverview>('models', serverSettings);
  if (typeof reply !== 'object' || reply === null || !('configured' in reply)) {
    throw new Error('Unexpected reply from /hdsp-agent/models');
  }
  return { ...reply, models: reply.models ?? [] };
}

/**
 * `GET /hdsp-agent/sessions`: every conversation, as the server orders them.
 */
export async function listSessions(
  serverSettings: ServerConnection.ISettings
): Promise<ISessionRecord[]> {
  const reply = await requestAPI<ISessionList>('sessions', serverSettings);
  return Array.isArray(reply?.sessions) ? reply.sessions : [];
}

/**
 * `POST /hdsp-agent/sessions`: a new conversation.
 */
export function createSession(
  serverSettings: ServerConnection.ISettings,
  options: { title?: string; model?: string } = {}
): Promise<ISessionRecord> {
  return requestAPI<ISessionRecord>('sessions', serverSettings, {
    method: 'POST',
    body: JSON.stringify(options)
  });
}

/**
 * `GET /hdsp-agent/sessions/{id}`: one conversation and the seq of its latest event.
 */
export function getSession(
  serverSettings: ServerConnection.ISettings,
  sessionId: string
): Promise<ISessionDetail> {
  return requestAPI<ISessionDetail>(sessionPath(sessionId), serverSettings);
}

/**
 * `PATCH /hdsp-agent/sessions/{id}`: rename a conversation.
 */
export function renameSession(
  serverSettings: ServerConnection.ISettings,
  sessionId: string,
  title: string
): Promise<ISessionRecord> {
  return requestAPI<ISessionRecord>(sessionPath(sessionId), serverSettings, {
    method: 'PATCH',
    body: JSON.stringify({ title })
  });
}

/**
 * `DELETE /hdsp-agent/sessions/{id}`.
 */
export async function deleteSession(
  serverSettings: ServerConnection.ISettings,
  sessionId: string
): Promise<void> {
  await requestText(sessionPath(sessionId), serverSettings, {
    method: 'DELETE'
  });
}

/**
 * `GET /hdsp-agent/sessions/{id}/events?since=N`: the log after N (fills a gap the socket left).
 */
export function fetchEvents(
  serverSettings: ServerConnection.ISettings,
  sessionId: string,
  since: number
): Promise<IEventsPage> {
  return requestAPI<IEventsPage>(
    `${sessionPath(sessionId)}/events${URLExt.objectToQueryString({ since })}`,
    serverSettings
  );
}

/**
 * `GET /hdsp-agent/sessions/{id}/export?format=...`: the conversation as a document.
 */
export function exportSession(
  serverSettings: ServerConnection.ISettings,
  sessionId: string,
  format: ExportFormat = 'markdown'
): Promise<string> {
  return requestText(
    `${sessionPath(sessionId)}/export${URLExt.objectToQueryString({ format })}`,
    serverSettings
  );
}

/**
 * `POST /hdsp-agent/sessions/{id}/undo`: restore the files and cells the last turn changed.
 *
 * @throws ServerConnection.ResponseError 409 when there is nothing to undo, a turn runs, or the user
 * changed a file since (nothing is overwritten then)
 */
export function undoLastTurn(
  serverSettings: ServerConnection.ISettings,
  sessionId: string
): Promise<IUndoReply> {
  return requestAPI<IUndoReply>(
    `${sessionPath(sessionId)}/undo`,
    serverSettings,
    {
      method: 'POST'
    }
  );
}

/**
 * `GET /hdsp-agent/mcp/servers`: with `connect`, the server reads its configuration again and
 * starts the servers (a failed one is tried again); without, the state as it is.
 */
export async function fetchMcpServers(
  serverSettings: ServerConnection.ISettings,
  connect: boolean
): Promise<IMcpReport> {
  const query = URLExt.objectToQueryString({ refresh: connect ? '1' : '0' });
  const reply = await requestAPI<IMcpReport>(
    `mcp/servers${query}`,
    serverSettings
  );
  if (
    typeof reply !== 'object' ||
    reply === null ||
    !Array.isArray(reply.servers)
  ) {
    throw new Error('Unexpected reply from /hdsp-agent/mcp/servers');
  }
  return {
    ...reply,
    problems: reply.problems ?? [],
    declared_tool_problems: reply.declared_tool_problems ?? []
  };
}

/**
 * `POST /hdsp-agent/mcp/trust`: trust the project's .hdsp/mcp.json as the user saw it.
 *
 * @throws ServerConnection.ResponseError 409 when the file changed since it was read
 */
export async function trustProjectFile(
  serverSettings: ServerConnection.ISettings,
  sha256: string
): Promise<void> {
  await requestAPI('mcp/trust', serverSettings, {
    method: 'POST',
    body: JSON.stringify({ sha256 })
  });
}

/**
 * The WebSocket URL of a conversation, with the token appended the way JupyterLab's own kernel
 * sockets do it (browsers cannot set headers on a WebSocket).
 */
export function sessionSocketUrl(
  serverSettings: ServerConnection.ISettings,
  sessionId: string
): string {
  return withToken(
    serverSettings,
    URLExt.join(
      serverSettings.wsUrl,
      API_NAMESPACE,
      sessionPath(sessionId),
      'ws'
    )
  );
}

/**
 * The WebSocket URL of this tab's NotebookBridge (see notebookBridge.ts).
 */
export function notebookBridgeUrl(
  serverSettings: ServerConnection.ISettings
): string {
  return withToken(
    serverSettings,
    URLExt.join(serverSettings.wsUrl, API_NAMESPACE, 'notebooks', 'ws')
  );
}

function withToken(
  serverSettings: ServerConnection.ISettings,
  url: string
): string {
  const token = serverSettings.token;
  if (serverSettings.appendToken && token) {
    return `${url}?token=${encodeURIComponent(token)}`;
  }
  return url;
}

function sessionPath(sessionId: string): string {
  return `sessions/${encodeURIComponent(sessionId)}`;
}
