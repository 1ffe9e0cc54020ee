import * as React from 'react';

/**
 * Whether a text looks like a unified diff (what edit tools put in `details.diff` and previews).
 */
export function isUnifiedDiff(text: string): boolean {
  return /^(--- |\+\+\+ |@@ )/m.test(text) && /^@@ /m.test(text);
}

type LineKind = 'add' | 'remove' | 'hunk' | 'file' | 'context';

function lineKind(line: string): LineKind {
  if (line.startsWith('+++ ') || line.startsWith('--- ')) {
    return 'file';
  }
  if (line.startsWith('@@')) {
    return 'hunk';
  }
  if (line.startsWith('+')) {
    return 'add';
  }
  if (line.startsWith('-')) {
    return 'remove';
  }
  return 'context';
}

/**
 * A unified diff with added lines, removed lines and hunk headers colored by the theme.
 */
export function DiffView({
  diff,
  label
}: {
  diff: string;
  label?: string;
}): JSX.Element {
  const lines = diff.replace(/\n$/, '').split('\n');
  return (
    <pre className="jp-hdsp-Diff" aria-label={label}>
      {lines.map((line, index) => (
        <div
          key={index}
          className={`jp-hdsp-Diff-line jp-hdsp-Diff-${lineKind(line)}`}
        >
          {line || ' '}
        </div>
      ))}
    </pre>
  );
}
