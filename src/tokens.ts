/**
 * Wire types shared with the server (mirrors of `hdsp_agent/routes.py` replies) and command ids.
 */

/**
 * The URL namespace of every hdsp-agent route on the Jupyter server.
 */
export const API_NAMESPACE = 'hdsp-agent';

/**
 * The id of the frontend plugin; also the key of its settings.
 */
export const PLUGIN_ID = 'hdsp-agent:plugin';

/**
 * The DOM id of the sidebar panel.
 */
export const PANEL_ID = 'hdsp-agent-panel';

/**
 * The translation domain of every user-facing string.
 */
export const TRANSLATION_DOMAIN = 'hdsp_agent';

/**
 * Command ids registered by hdsp-agent.
 */
export namespace CommandIDs {
  export const open = 'hdsp-agent:open';
}

/**
 * One tool as the server describes it (`GET /hdsp-agent/info`).
 */
export interface IToolInfo {
  name: string;
  description: string;
  read_only: boolean;
  /**
   * The JSON Schema of the tool's arguments.
   */
  parameters: object;
}

/**
 * The reply of `GET /hdsp-agent/info`: the server version for the handshake and the tool catalog.
 */
export interface IServerInfo {
  name: string;
  version: string;
  tools: IToolInfo[];
}

/**
 * Per-user UI preferences (schema/plugin.json).
 */
export interface IPreferences {
  sendOnEnter: boolean;
  showToolDetails: boolean;
  autoScroll: boolean;
}
