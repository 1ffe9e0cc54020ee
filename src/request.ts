import { URLExt } from '@jupyterlab/coreutils';
import { ServerConnection } from '@jupyterlab/services';

import { API_NAMESPACE } from './tokens';

/**
 * Call an hdsp-agent route of the Jupyter server and return its JSON reply.
 *
 * Authentication and XSRF headers come from `ServerConnection.makeRequest`.
 *
 * @param endpoint Path under `/hdsp-agent/`
 * @param serverSettings The server settings to use for the request
 * @param init Initial values for the request
 * @throws ServerConnection.NetworkError when the server cannot be reached
 * @throws ServerConnection.ResponseError on a non-2xx reply
 */
export async function requestAPI<T>(
  endpoint: string,
  serverSettings: ServerConnection.ISettings,
  init: RequestInit = {}
): Promise<T> {
  const text = await requestText(endpoint, serverSettings, init);
  return parseBody(text) as T;
}

/**
 * Like {@link requestAPI}, for routes whose reply is not JSON (e.g. a Markdown export).
 */
export async function requestText(
  endpoint: string,
  serverSettings: ServerConnection.ISettings,
  init: RequestInit = {}
): Promise<string> {
  const url = URLExt.join(serverSettings.baseUrl, API_NAMESPACE, endpoint);

  let response: Response;
  try {
    response = await ServerConnection.makeRequest(url, init, serverSettings);
  } catch (error) {
    throw new ServerConnection.NetworkError(error as TypeError);
  }

  const text = await response.text();
  if (!response.ok) {
    const body = parseBody(text);
    throw new ServerConnection.ResponseError(
      response,
      (body as any)?.message || text
    );
  }
  return text;
}

function parseBody(text: string): unknown {
  if (text.length === 0) {
    return text;
  }
  try {
    return JSON.parse(text);
  } catch {
    // Not JSON (e.g. an HTML error page from a proxy): keep the text for the error message.
    return text;
  }
}
