import { ServerConnection } from '@jupyterlab/services';

import { requestAPI } from './request';
import { IServerInfo } from './tokens';

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
