import { TranslationBundle } from '@jupyterlab/translation';
import * as React from 'react';

import { IModelsOverview } from '../tokens';

/**
 * Shown while the server has no model: how to configure one, and the local servers it found.
 */
export function SetupScreen({
  models,
  onRetry,
  trans
}: {
  models: IModelsOverview;
  onRetry: () => void;
  trans: TranslationBundle;
}): JSX.Element {
  const discovered = models.discovered ?? [];
  return (
    <div
      className="jp-hdsp-Setup"
      role="region"
      aria-label={trans.__('Model setup')}
    >
      <h3 className="jp-hdsp-Setup-title">{trans.__('Connect a model')}</h3>
      <p>
        {trans.__(
          'hdsp-agent talks to any OpenAI-compatible endpoint. The administrator sets it in the Jupyter server configuration; keys stay on the server.'
        )}
      </p>
      {models.setup_help && (
        <pre className="jp-hdsp-Setup-help">{models.setup_help}</pre>
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
                {server.models.length > 0 && (
                  <div className="jp-hdsp-Setup-models">
                    {trans.__('Models: %1', server.models.join(', '))}
                  </div>
                )}
              </li>
            ))}
          </ul>
        </>
      )}
      <button
        type="button"
        className="jp-mod-styled jp-mod-accept"
        onClick={onRetry}
      >
        {trans.__('Check again')}
      </button>
    </div>
  );
}
