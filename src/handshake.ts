import { ServerConnection } from '@jupyterlab/services';

import { fetchServerInfo } from './api';
import { IServerInfo } from './tokens';
import { versionsMatch } from './version';

/**
 * The server answered, but it is another release than this frontend.
 */
export interface IVersionMismatch {
  kind: 'version-mismatch';
  frontendVersion: string;
  serverVersion: string;
}

/**
 * The server could not be reached, refused the request, or answered nonsense.
 */
export interface IUnreachable {
  kind: 'unreachable';
  /**
   * The HTTP status when the server answered (404: the server extension is not enabled).
   */
  httpStatus?: number;
  detail: string;
}

export type ConnectionError = IVersionMismatch | IUnreachable;

/**
 * Why the handshake request failed.
 */
export function unreachable(reason: unknown): IUnreachable {
  if (reason instanceof ServerConnection.ResponseError) {
    return {
      kind: 'unreachable',
      httpStatus: reason.response.status,
      detail: `${reason.response.status} ${reason.response.statusText}`.trim()
    };
  }
  return {
    kind: 'unreachable',
    detail: reason instanceof Error ? reason.message : String(reason)
  };
}

/**
 * A failure of a user action, in the words the server (or the browser) gave.
 */
export function describeFailure(reason: unknown): string {
  if (reason instanceof ServerConnection.ResponseError) {
    return reason.message || `${reason.response.status}`;
  }
  return reason instanceof Error ? reason.message : String(reason);
}

/**
 * Ask the server who it is and check that it is the same release as this frontend: a stale browser
 * bundle or a half-upgraded install is refused with both versions named, instead of failing later.
 */
export async function handshake(
  serverSettings: ServerConnection.ISettings,
  frontendVersion: string
): Promise<{ serverInfo: IServerInfo } | { error: ConnectionError }> {
  let serverInfo: IServerInfo;
  try {
    serverInfo = await fetchServerInfo(serverSettings);
  } catch (reason) {
    return { error: unreachable(reason) };
  }
  if (!versionsMatch(frontendVersion, serverInfo.version)) {
    return {
      error: {
        kind: 'version-mismatch',
        frontendVersion,
        serverVersion: serverInfo.version
      }
    };
  }
  return { serverInfo };
}
