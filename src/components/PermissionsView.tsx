import { TranslationBundle } from '@jupyterlab/translation';
import * as React from 'react';

import { fetchPermissions, revokePermission } from '../api';
import { describeFailure } from '../handshake';
import { AgentModel } from '../model';
import { IPermissionsOverview, ISessionGrant } from '../tokens';
import { baseName, toolHeadline } from '../toolWords';

/**
 * What the user allowed: this chat's grants ("Allow for this chat") and the rules "Always allow"
 * saved, with where each applies, each removable. Read from the server when the view opens and
 * after each removal, so it shows what the policy will actually use.
 */
export function PermissionsView({
  model,
  trans
}: {
  model: AgentModel;
  trans: TranslationBundle;
}): JSX.Element {
  const sessionId = model.activeSession?.id ?? null;
  const [overview, setOverview] = React.useState<IPermissionsOverview | null>(
    null
  );
  const [error, setError] = React.useState<string | null>(null);
  const [busy, setBusy] = React.useState(false);

  const load = React.useCallback(async () => {
    try {
      setOverview(await fetchPermissions(model.serverSettings, sessionId));
      setError(null);
    } catch (reason) {
      setError(describeFailure(reason));
    }
  }, [model, sessionId]);

  React.useEffect(() => {
    void load();
  }, [load]);

  const remove = async (
    what: Parameters<typeof revokePermission>[1]
  ): Promise<void> => {
    setBusy(true);
    try {
      await revokePermission(model.serverSettings, what);
    } catch (reason) {
      setError(describeFailure(reason));
    }
    await load();
    setBusy(false);
  };

  return (
    <section
      className="jp-hdsp-Permissions"
      aria-label={trans.__('Permissions')}
    >
      {error && (
        <div className="jp-hdsp-Error" role="alert">
          {error}
        </div>
      )}
      <h3 className="jp-hdsp-Permissions-heading">
        {trans.__('Allowed for this chat')}
      </h3>
      {!overview || overview.session.length === 0 ? (
        <p className="jp-hdsp-Permissions-empty">
          {sessionId
            ? trans.__('Nothing is allowed for this chat yet.')
            : trans.__('No chat is open.')}
        </p>
      ) : (
        <ul className="jp-hdsp-Permissions-list">
          {overview.session.map(grant => (
            <li key={`${grant.tool}\u0000${grant.subject}`}>
              <span className="jp-hdsp-Permissions-what">
                {grantWords(grant, trans)}
              </span>
              <button
                type="button"
                className="jp-mod-styled jp-mod-warn"
                disabled={busy}
                aria-label={trans.__('Remove: %1', grantWords(grant, trans))}
                onClick={() =>
                  void remove({
                    kind: 'session',
                    session_id: sessionId!,
                    tool: grant.tool,
                    subject: grant.subject
                  })
                }
              >
                {trans.__('Remove')}
              </button>
            </li>
          ))}
        </ul>
      )}
      <h3 className="jp-hdsp-Permissions-heading">
        {trans.__('Always allowed')}
      </h3>
      {!overview || overview.saved.length === 0 ? (
        <p className="jp-hdsp-Permissions-empty">
          {trans.__('No rules saved.')}
        </p>
      ) : (
        <ul className="jp-hdsp-Permissions-list">
          {overview.saved.map(rule => (
            <li key={rule} data-rule={rule}>
              {/* The rule as saved (tool name, pattern) only on hover: the words say the same. */}
              <span className="jp-hdsp-Permissions-what" title={rule}>
                {ruleWords(rule, trans)}
              </span>
              <button
                type="button"
                className="jp-mod-styled jp-mod-warn"
                disabled={busy}
                aria-label={trans.__('Remove: %1', ruleWords(rule, trans))}
                onClick={() => void remove({ kind: 'saved', rule })}
              >
                {trans.__('Remove')}
              </button>
            </li>
          ))}
        </ul>
      )}
      {overview?.file && (
        <p className="jp-hdsp-Permissions-file">
          {trans.__('Saved in %1', overview.file)}
        </p>
      )}
    </section>
  );
}

/**
 * A chat's grant in words: "Insert a cell into errors.ipynb", or the tool and its subject.
 */
export function grantWords(
  grant: ISessionGrant,
  trans: TranslationBundle
): string {
  const words = toolHeadline(grant.tool, { path: grant.subject }, trans);
  if (!grant.subject) {
    return words ?? grant.tool;
  }
  if (words && words.includes(baseName(grant.subject))) {
    return words;
  }
  // A command, a URL, ...: the headline has no place for it.
  return `${words ?? grant.tool}: ${grant.subject}`;
}

/**
 * A saved rule as a sentence: what the tool does (its words, never its name when it is one of ours) and
 * where: `tool` everywhere, `tool(dir/**)` in a folder (by its name), `tool(x)` to x only ("Insert a cell
 * into perm.ipynb").
 */
export function ruleWords(rule: string, trans: TranslationBundle): string {
  const match = /^([^()]+?)(?:\((.*)\))?$/s.exec(rule.trim());
  if (!match) {
    return rule;
  }
  const [, tool, pattern] = match;
  const does = toolHeadline(tool, null, trans) ?? tool;
  if (pattern === undefined) {
    return trans.__('%1, everywhere', does);
  }
  if (pattern === '**') {
    return trans.__('%1, anywhere in the project', does);
  }
  if (pattern.endsWith('/**')) {
    return trans.__(
      '%1, in the folder %2',
      does,
      baseName(pattern.slice(0, -3))
    );
  }
  const exact = toolHeadline(tool, { path: pattern }, trans);
  if (exact && exact.includes(baseName(pattern))) {
    return exact;
  }
  // A command, a URL, or a tool that is not ours.
  return exact
    ? trans.__('%1: %2', exact, pattern)
    : trans.__('%1, for %2 only', tool, pattern);
}
