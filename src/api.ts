/**
 * Every call to the server's hdsp-agent routes (`hdsp_agent/web/`), one function each; `request.ts`
 * does the fetch. The reply types live in tokens.ts.
 */
import { URLExt } from '@jupyterlab/coreutils';
import { ServerConnection } from '@jupyterlab/services';

import { IHunk } from './hunks';
import { requestAPI, requestText } from './request';
import {
  API_NAMESPACE,
  ExportFormat,
  ICreateSessionRequest,
  IEventsPage,
  IEndpointModels,
  IEndpointModelsRequest,
  IHunksReply,
  IInlineCompletionReply,
  IInlineCompletionRequest,
  IInstruction,
  IInstructionsReply,
  IMcpReport,
  IMcpTrustRequest,
  IMentionsReply,
  IModelSetupRequest,
  IModelsOverview,
  IModelTestReply,
  IPermissionsOverview,
  IRenameSessionRequest,
  IRestoreRequest,
  IRevokeSavedRequest,
  IRevokeSessionRequest,
  IServerInfo,
  ISessionDetail,
  ISessionList,
  ISessionRecord,
  IUndoCellRequest,
  IKeepCellReply,
  IKeepCellRequest,
  IUndoHunkReply,
  IUndoHunkRequest,
  IUndoReply,
  IUndoRequest,
  ICompactReply,
  IContextReply,
  IMcpPromptsReply,
  IClientContext,
  ISkillsReply,
  ISkillTrustRequest
} from './tokens';

/** A request body, typed by its model's mirror (so a field the server does not know fails to compile). */
function jsonBody<T>(body: T): string {
  return JSON.stringify(body);
}

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
 * `GET /hdsp-agent/instructions?path=...`: the instruction files and rules that apply to the next message.
 */
export async function fetchInstructions(
  serverSettings: ServerConnection.ISettings,
  path: string | null
): Promise<IInstruction[]> {
  const query = path ? URLExt.objectToQueryString({ path }) : '';
  const reply = await requestAPI<Partial<IInstructionsReply>>(
    `instructions${query}`,
    serverSettings
  );
  return Array.isArray(reply?.instructions) ? reply.instructions : [];
}

/**
 * `GET /hdsp-agent/mentions?q=...`: project files for the composer's `@` completion (no secret files).
 */
export async function fetchMentionFiles(
  serverSettings: ServerConnection.ISettings,
  query: string
): Promise<string[]> {
  const reply = await requestAPI<Partial<IMentionsReply>>(
    `mentions${URLExt.objectToQueryString({ q: query })}`,
    serverSettings
  );
  return Array.isArray(reply?.files) ? reply.files : [];
}

/**
 * `POST /hdsp-agent/complete`: one inline completion; `signal` aborts it (the server then drops the model's
 * request too).
 */
export function fetchInlineCompletion(
  serverSettings: ServerConnection.ISettings,
  body: IInlineCompletionRequest,
  signal?: AbortSignal
): Promise<IInlineCompletionReply> {
  return requestAPI<IInlineCompletionReply>('complete', serverSettings, {
    method: 'POST',
    body: JSON.stringify(body),
    signal
  });
}

/**
 * `PUT /hdsp-agent/model-setup`: save the user's model (effective at once); the new model overview.
 */
export function saveModelSetup(
  serverSettings: ServerConnection.ISettings,
  request: IModelSetupRequest
): Promise<IModelsOverview> {
  return requestAPI<IModelsOverview>('model-setup', serverSettings, {
    method: 'PUT',
    body: jsonBody<IModelSetupRequest>(request)
  });
}

/**
 * `POST /hdsp-agent/model-setup/models`: the models an endpoint lists (an `error` when it cannot).
 */
export function listEndpointModels(
  serverSettings: ServerConnection.ISettings,
  baseUrl: string,
  apiKey?: string
): Promise<IEndpointModels> {
  return requestAPI<IEndpointModels>('model-setup/models', serverSettings, {
    method: 'POST',
    body: jsonBody<IEndpointModelsRequest>({
      base_url: baseUrl,
      ...(apiKey ? { api_key: apiKey } : {})
    })
  });
}

/**
 * `POST /hdsp-agent/model-setup/test`: the readiness check (two small requests, capped in tokens).
 */
export function testModel(
  serverSettings: ServerConnection.ISettings,
  request: IModelSetupRequest
): Promise<IModelTestReply> {
  return requestAPI<IModelTestReply>('model-setup/test', serverSettings, {
    method: 'POST',
    body: jsonBody<IModelSetupRequest>(request)
  });
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
    body: jsonBody<ICreateSessionRequest>(options)
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
    body: jsonBody<IRenameSessionRequest>({ title })
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
 * `POST /hdsp-agent/sessions/{id}/undo`: restore the files and cells the last turn changed, all or nothing.
 * `unsaved`: the contents paths open with unsaved changes here (the server does not write under them).
 *
 * @throws ServerConnection.ResponseError 409 when there is nothing to undo, a turn runs, or something the
 * turn changed was changed since (its message names each cell and file; nothing is applied then)
 */
export function undoLastTurn(
  serverSettings: ServerConnection.ISettings,
  sessionId: string,
  unsaved: string[] = []
): Promise<IUndoReply> {
  return requestAPI<IUndoReply>(
    `${sessionPath(sessionId)}/undo`,
    serverSettings,
    { method: 'POST', body: jsonBody<IUndoRequest>({ unsaved }) }
  );
}

/**
 * `POST /hdsp-agent/sessions/{id}/restore`: back to the checkpoint before turn `turnId` (it and every later
 * turn undone), all or nothing.
 *
 * @throws ServerConnection.ResponseError 409 as {@link undoLastTurn}, or when the checkpoint is gone (removed
 * to keep the undo history under its size limit)
 */
export function restoreCheckpoint(
  serverSettings: ServerConnection.ISettings,
  sessionId: string,
  turnId: string,
  unsaved: string[] = []
): Promise<IUndoReply> {
  return requestAPI<IUndoReply>(
    `${sessionPath(sessionId)}/restore`,
    serverSettings,
    {
      method: 'POST',
      body: jsonBody<IRestoreRequest>({ turn_id: turnId, unsaved })
    }
  );
}

/**
 * `POST /hdsp-agent/sessions/{id}/redo`: re-do the last undo or restore, all or nothing.
 *
 * @throws ServerConnection.ResponseError 409 when there is nothing to redo or something changed since
 */
export function redoUndo(
  serverSettings: ServerConnection.ISettings,
  sessionId: string,
  unsaved: string[] = []
): Promise<IUndoReply> {
  return requestAPI<IUndoReply>(
    `${sessionPath(sessionId)}/redo`,
    serverSettings,
    { method: 'POST', body: jsonBody<IUndoRequest>({ unsaved }) }
  );
}

/**
 * `POST /hdsp-agent/sessions/{id}/undo-cell`: undo what the last turn did to one cell; the rest stays.
 *
 * @throws ServerConnection.ResponseError 409 when the user edited the cell since (it is left as it is)
 */
export function undoCell(
  serverSettings: ServerConnection.ISettings,
  sessionId: string,
  path: string,
  cellId: string
): Promise<IUndoReply> {
  return requestAPI<IUndoReply>(
    `${sessionPath(sessionId)}/undo-cell`,
    serverSettings,
    {
      method: 'POST',
      body: jsonBody<IUndoCellRequest>({ path, cell_id: cellId })
    }
  );
}

/**
 * `POST /hdsp-agent/sessions/{id}/keep-cell`: keep the agent's change to one cell; no undo takes it back.
 */
export function keepCell(
  serverSettings: ServerConnection.ISettings,
  sessionId: string,
  path: string,
  cellId: string
): Promise<IKeepCellReply> {
  return requestAPI<IKeepCellReply>(
    `${sessionPath(sessionId)}/keep-cell`,
    serverSettings,
    {
      method: 'POST',
      body: jsonBody<IKeepCellRequest>({ path, cell_id: cellId })
    }
  );
}

/**
 * `GET /hdsp-agent/sessions/{id}/hunks?path=`: the last turn's change to one file, hunk by hunk, as the file
 * is on disk now ([] when the turn did not change it).
 */
export async function fetchHunks(
  serverSettings: ServerConnection.ISettings,
  sessionId: string,
  path: string
): Promise<IHunk[]> {
  const query = URLExt.objectToQueryString({ path });
  const reply = await requestAPI<IHunksReply>(
    `${sessionPath(sessionId)}/hunks${query}`,
    serverSettings
  );
  return reply.hunks ?? [];
}

/**
 * `POST /hdsp-agent/sessions/{id}/undo-hunk`: put one hunk of the last turn's change to a file back as it
 * was; replies with the hunks left.
 *
 * @throws ServerConnection.ResponseError 409 when the hunk's lines were edited since (the file is left as
 * it is)
 */
export function undoHunk(
  serverSettings: ServerConnection.ISettings,
  sessionId: string,
  path: string,
  hunk: IHunk
): Promise<IUndoHunkReply> {
  return requestAPI<IUndoHunkReply>(
    `${sessionPath(sessionId)}/undo-hunk`,
    serverSettings,
    {
      method: 'POST',
      body: jsonBody<IUndoHunkRequest>({ path, hunk })
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
    body: jsonBody<IMcpTrustRequest>({ sha256 })
  });
}

/** `GET /hdsp-agent/skills`: every skill found, with its trust. */
export function fetchSkills(
  serverSettings: ServerConnection.ISettings
): Promise<ISkillsReply> {
  return requestAPI<ISkillsReply>('skills', serverSettings);
}

/**
 * `POST /hdsp-agent/skills/trust`: trust a project skill's folder as the user saw it.
 *
 * @throws ServerConnection.ResponseError 409 when it changed since it was listed
 */
export async function trustSkill(
  serverSettings: ServerConnection.ISettings,
  path: string,
  sha256: string
): Promise<void> {
  await requestAPI('skills/trust', serverSettings, {
    method: 'POST',
    body: jsonBody<ISkillTrustRequest>({ path, sha256 })
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

/**
 * `GET /hdsp-agent/permissions`: the grants of one conversation and the saved "always" rules.
 */
export async function fetchPermissions(
  serverSettings: ServerConnection.ISettings,
  sessionId: string | null
): Promise<IPermissionsOverview> {
  const query = sessionId ? `?session_id=${encodeURIComponent(sessionId)}` : '';
  const reply = await requestAPI<IPermissionsOverview>(
    `permissions${query}`,
    serverSettings
  );
  return {
    session: Array.isArray(reply?.session) ? reply.session : [],
    saved: Array.isArray(reply?.saved) ? reply.saved : [],
    file: reply?.file ?? null
  };
}

/**
 * `POST /hdsp-agent/permissions/revoke`: remove a chat's grant or a saved rule.
 */
export async function revokePermission(
  serverSettings: ServerConnection.ISettings,
  what: IRevokeSessionRequest | IRevokeSavedRequest
): Promise<void> {
  await requestAPI('permissions/revoke', serverSettings, {
    method: 'POST',
    body: jsonBody<IRevokeSessionRequest | IRevokeSavedRequest>(what)
  });
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

/**
 * `POST /hdsp-agent/sessions/{id}/context` (`/context`): what the next request holds, by part, built by the
 * server's own request code; `draft`, a message about to be sent, is counted as the last user message.
 */
export function fetchContextBreakdown(
  serverSettings: ServerConnection.ISettings,
  sessionId: string,
  context: IClientContext,
  model?: string,
  draft?: string
): Promise<IContextReply> {
  return requestAPI<IContextReply>(
    `${sessionPath(sessionId)}/context`,
    serverSettings,
    {
      method: 'POST',
      body: JSON.stringify({
        context,
        model: model || null,
        draft: draft || null
      })
    }
  );
}

/**
 * `POST /hdsp-agent/sessions/{id}/compact` (`/compact`): summarize the conversation now.
 *
 * @throws ServerConnection.ResponseError 409 when a turn runs
 */
export function compactSession(
  serverSettings: ServerConnection.ISettings,
  sessionId: string,
  context: IClientContext,
  model?: string
): Promise<ICompactReply> {
  return requestAPI<ICompactReply>(
    `${sessionPath(sessionId)}/compact`,
    serverSettings,
    { method: 'POST', body: JSON.stringify({ context, model: model || null }) }
  );
}

/** `GET /hdsp-agent/mcp/prompts`: the prompts of the MCP servers that may start (`/mcp:…` commands). */
export function fetchMcpPrompts(
  serverSettings: ServerConnection.ISettings
): Promise<IMcpPromptsReply> {
  return requestAPI<IMcpPromptsReply>('mcp/prompts', serverSettings);
}

/**
 * `POST /hdsp-agent/mcp/prompts/get`: one prompt's text, with its arguments.
 *
 * @throws ServerConnection.ResponseError 409 when the server refuses (a missing argument, no such prompt)
 */
export async function getMcpPrompt(
  serverSettings: ServerConnection.ISettings,
  server: string,
  name: string,
  args: Record<string, string>
): Promise<string> {
  const reply = await requestAPI<{ text: string }>(
    'mcp/prompts/get',
    serverSettings,
    {
      method: 'POST',
      body: JSON.stringify({ server, name, arguments: args })
    }
  );
  return reply.text;
}
