import { TranslationBundle } from '@jupyterlab/translation';
import * as React from 'react';

import { AgentModel } from '../model';
import { AGENT_MODES, AgentMode } from '../tokens';
import { useSignals } from './hooks';
import { readinessLabel } from './ReadinessCard';

// Not a model name a server could list (names never start with a NUL).
const MANAGE_MODELS = '\u0000manage-models';

/**
 * The model picker and the mode switch.
 */
export function ComposerToolbar({
  model,
  trans
}: {
  model: AgentModel;
  trans: TranslationBundle;
}): JSX.Element {
  useSignals([model.stateChanged]);
  const models = model.models?.models ?? [];
  // The administrator fixed the model (admin.json): the picker says so, and offers no way to add one.
  const locked = model.models?.setup?.allowed === false;
  return (
    <div className="jp-hdsp-ComposerToolbar">
      {models.length > 0 && (
        <select
          className="jp-hdsp-Select"
          aria-label={trans.__('Model')}
          title={
            locked
              ? trans.__('The model is set by your administrator')
              : trans.__('The model that answers the next message')
          }
          value={model.selectedModel || models[0].name}
          onChange={event => {
            if (event.target.value === MANAGE_MODELS) {
              model.openSetup();
              return;
            }
            model.selectedModel = event.target.value;
          }}
        >
          {models.map(info => (
            <option
              key={info.name}
              value={info.name}
              title={
                info.readiness
                  ? info.readiness.lines.map(line => line.text).join('\n')
                  : undefined
              }
            >
              {info.readiness
                ? `${info.name} · ${readinessLabel(info.readiness, trans)}`
                : info.name}
            </option>
          ))}
          {locked ? (
            <option value="" disabled>
              {trans.__('Set by your administrator')}
            </option>
          ) : (
            <option value={MANAGE_MODELS}>{trans.__('Manage models…')}</option>
          )}
        </select>
      )}
      <select
        className="jp-hdsp-Select"
        aria-label={trans.__('Mode')}
        title={modeDescription(model.mode, trans)}
        value={model.mode}
        onChange={event => {
          model.mode = event.target.value as AgentMode;
        }}
      >
        {AGENT_MODES.map(mode => (
          <option key={mode} value={mode} title={modeDescription(mode, trans)}>
            {modeLabel(mode, trans)}
          </option>
        ))}
      </select>
    </div>
  );
}

/**
 * Undo the last turn of the open conversation (enabled once a turn has ended).
 */
export function UndoButton({
  model,
  trans
}: {
  model: AgentModel;
  trans: TranslationBundle;
}): JSX.Element {
  useSignals([model.stateChanged]);
  return (
    <button
      type="button"
      className="jp-mod-styled jp-hdsp-Undo"
      disabled={!model.activeSession?.conversation.canUndo}
      title={trans.__(
        'Undo the last turn: restore the files and cells it changed'
      )}
      onClick={() => void model.undoLastTurn()}
    >
      {trans.__('Undo')}
    </button>
  );
}

export function modeLabel(mode: AgentMode, trans: TranslationBundle): string {
  switch (mode) {
    case 'default':
      return trans.__('Ask before changes');
    case 'accept-edits':
      return trans.__('Accept edits');
    case 'read-only':
      return trans.__('Read-only');
    case 'accept-edits-run':
      return trans.__('Accept edits, run this notebook');
    case 'plan':
      return trans.__('Plan');
  }
}

function modeDescription(mode: AgentMode, trans: TranslationBundle): string {
  switch (mode) {
    case 'default':
      return trans.__(
        'The agent asks before it changes files, cells or runs code'
      );
    case 'accept-edits':
      return trans.__(
        'File and cell edits are applied without asking; running code still asks'
      );
    case 'read-only':
      return trans.__('The agent only reads: no edits, no code, no commands');
    case 'accept-edits-run':
      return trans.__(
        'Edits are applied and cells of the notebook in view run without asking; other notebooks, files and commands still ask'
      );
    case 'plan':
      return trans.__(
        'The agent only reads, then writes a plan for you to approve or edit'
      );
  }
}
