import { TranslationBundle } from '@jupyterlab/translation';
import * as React from 'react';

import { fetchSkills, trustSkill } from '../api';
import { describeFailure } from '../handshake';
import { AgentModel } from '../model';
import { ISkillInfo } from '../tokens';

/**
 * The skills the agent may use (built-in, the user's, the project's trusted ones) and the project
 * skills waiting for the user's trust: a project skill's instructions become the agent's, so a new or
 * changed one is offered to the model only after "Trust". Read from the server when shown (the MCP
 * drawer, `/skills`) and after each trust.
 */
export function SkillsView({
  model,
  trans,
  onClose
}: {
  model: AgentModel;
  trans: TranslationBundle;
  /** Given when shown in the composer (`/skills`): a Close button. */
  onClose?: () => void;
}): JSX.Element {
  const [skills, setSkills] = React.useState<ISkillInfo[] | null>(null);
  const [error, setError] = React.useState<string | null>(null);
  const [busy, setBusy] = React.useState(false);

  const load = React.useCallback(async () => {
    try {
      setSkills((await fetchSkills(model.serverSettings)).skills);
      setError(null);
    } catch (reason) {
      setError(describeFailure(reason));
    }
  }, [model]);

  React.useEffect(() => {
    void load();
  }, [load]);

  const trust = async (skill: ISkillInfo): Promise<void> => {
    setBusy(true);
    try {
      await trustSkill(model.serverSettings, skill.path, skill.sha256);
    } catch (reason) {
      setError(describeFailure(reason));
    }
    await load();
    setBusy(false);
  };

  const sourceWords: Record<ISkillInfo['source'], string> = {
    builtin: trans.__('built in'),
    user: trans.__('yours'),
    project: trans.__('this project')
  };
  return (
    <section className="jp-hdsp-Skills" aria-label={trans.__('Skills')}>
      <div className="jp-hdsp-McpServers-header">
        <span className="jp-hdsp-McpServers-title">{trans.__('Skills')}</span>
        {onClose && (
          <button type="button" className="jp-mod-styled" onClick={onClose}>
            {trans.__('Close')}
          </button>
        )}
      </div>
      {error && (
        <div className="jp-hdsp-Error" role="alert">
          {error}
        </div>
      )}
      {skills && (
        <ul className="jp-hdsp-McpServers-list">
          {skills.map(skill => (
            <li
              key={`${skill.source}:${skill.path}`}
              className="jp-hdsp-Skills-item"
              data-skill={skill.name}
              data-status={skill.status}
            >
              <div>
                <strong>{skill.name}</strong>{' '}
                <span className="jp-hdsp-Skills-source">
                  {sourceWords[skill.source]}
                </span>
              </div>
              {skill.status === 'invalid' ? (
                <div className="jp-hdsp-Error">
                  {trans.__(
                    '%1 is not used: %2',
                    skill.path,
                    skill.problem ?? ''
                  )}
                </div>
              ) : (
                <div className="jp-hdsp-Skills-description">
                  {skill.description}
                </div>
              )}
              {(skill.status === 'untrusted' || skill.status === 'changed') && (
                <div className="jp-hdsp-Notice jp-mod-warning">
                  <div>
                    {skill.status === 'changed'
                      ? trans.__(
                          '%1 changed since you trusted it: the agent does not use it until you trust it again.',
                          skill.path
                        )
                      : trans.__(
                          '%1 gives the agent instructions (and may hold scripts). The agent does not use it until you trust it: read it first.',
                          skill.path
                        )}
                  </div>
                  <button
                    type="button"
                    className="jp-mod-styled jp-mod-warn jp-hdsp-Skills-trust"
                    disabled={busy}
                    onClick={() => void trust(skill)}
                  >
                    {trans.__('Trust this skill')}
                  </button>
                </div>
              )}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
