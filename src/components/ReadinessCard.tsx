import { TranslationBundle } from '@jupyterlab/translation';
import * as React from 'react';

import type { ServerTexts } from '../events';
import { serverText } from '../serverText';
import { IReadinessLine, IReadinessReport } from '../tokens';

const MARKS: Record<IReadinessLine['verdict'], string> = {
  ok: '✔',
  warn: '!',
  fail: '✘'
};

/**
 * The readiness check's verdicts, one line each with the next action, and the tool-call mode it leads to.
 */
export function ReadinessCard({
  report,
  texts,
  trans
}: {
  report: IReadinessReport;
  texts?: ServerTexts;
  trans: TranslationBundle;
}): JSX.Element {
  const headings: Record<IReadinessLine['check'], string> = {
    streaming: trans.__('Streaming'),
    tools: trans.__('Tool calls'),
    window: trans.__('Context window'),
    prompt: trans.__('Prompt size')
  };
  return (
    <div
      className={`jp-hdsp-Readiness jp-hdsp-Readiness-${report.verdict}`}
      role="status"
      aria-label={trans.__('Readiness check')}
    >
      <ul className="jp-hdsp-Readiness-lines">
        {report.lines.map(line => (
          <li
            key={line.check}
            className={`jp-hdsp-Readiness-line jp-mod-${line.verdict}`}
            data-check={line.check}
          >
            <span className="jp-hdsp-Readiness-mark" aria-hidden="true">
              {MARKS[line.verdict]}
            </span>
            <strong>{headings[line.check]}</strong>{' '}
            {serverText(trans, line.text, texts)}
            {line.action && (
              <div className="jp-hdsp-Readiness-action">
                {serverText(trans, line.action, texts)}
              </div>
            )}
          </li>
        ))}
      </ul>
      <p className="jp-hdsp-Readiness-mode">
        {report.tool_mode === 'native'
          ? trans.__('Tool calls: native')
          : trans.__('Tool calls: described in the prompt (text mode)')}
      </p>
    </div>
  );
}

/**
 * A short label for the model picker: how the latest readiness check went.
 */
export function readinessLabel(
  report: IReadinessReport | undefined,
  trans: TranslationBundle
): string {
  if (!report) {
    return '';
  }
  const mode =
    report.tool_mode === 'text'
      ? trans.__('text tool calls')
      : trans.__('native tool calls');
  return report.verdict === 'fail'
    ? trans.__('✘ not ready')
    : `${MARKS[report.verdict]} ${mode}`;
}
