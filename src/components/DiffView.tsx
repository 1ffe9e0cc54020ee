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

interface IDiffRow {
  kind: LineKind;
  text: string;
  /**
   * The changed part of a removed/added line paired with its counterpart: [start, end) in `text`.
   */
  changed?: [number, number];
}

/**
 * The diff's lines, with each removed line paired with the added line at the same place in the
 * next block, and the part between their common prefix and suffix marked as changed: the eye finds
 * `1` -> `2` in a long line without comparing it character by character.
 */
export function diffRows(diff: string): IDiffRow[] {
  const rows: IDiffRow[] = diff
    .replace(/\n$/, '')
    .split('\n')
    .map(text => ({ kind: lineKind(text), text }));
  for (let i = 0; i < rows.length;) {
    if (rows[i].kind !== 'remove') {
      i++;
      continue;
    }
    let removeEnd = i;
    while (removeEnd < rows.length && rows[removeEnd].kind === 'remove') {
      removeEnd++;
    }
    let addEnd = removeEnd;
    while (addEnd < rows.length && rows[addEnd].kind === 'add') {
      addEnd++;
    }
    const pairs = Math.min(removeEnd - i, addEnd - removeEnd);
    for (let k = 0; k < pairs; k++) {
      markChange(rows[i + k], rows[removeEnd + k]);
    }
    i = addEnd;
  }
  return rows;
}

function markChange(removed: IDiffRow, added: IDiffRow): void {
  const a = removed.text;
  const b = added.text;
  let prefix = 1; // after the -/+ sign
  while (prefix < a.length && prefix < b.length && a[prefix] === b[prefix]) {
    prefix++;
  }
  let suffix = 0;
  while (
    suffix < a.length - prefix &&
    suffix < b.length - prefix &&
    a[a.length - 1 - suffix] === b[b.length - 1 - suffix]
  ) {
    suffix++;
  }
  // Lines with nothing in common read better whole.
  if (prefix === 1 && suffix === 0) {
    return;
  }
  removed.changed = [prefix, a.length - suffix];
  added.changed = [prefix, b.length - suffix];
}

/**
 * A unified diff with added lines, removed lines and hunk headers colored by the theme, the changed
 * part of a changed line marked; long lines wrap, so a narrow sidebar shows the whole change.
 */
export function DiffView({
  diff,
  label
}: {
  diff: string;
  label?: string;
}): JSX.Element {
  return (
    <pre className="jp-hdsp-Diff" aria-label={label}>
      {diffRows(diff).map((row, index) => (
        <div
          key={index}
          className={`jp-hdsp-Diff-line jp-hdsp-Diff-${row.kind}`}
        >
          {row.changed && row.changed[1] > row.changed[0] ? (
            <>
              {row.text.slice(0, row.changed[0])}
              <mark className="jp-hdsp-Diff-changed">
                {row.text.slice(row.changed[0], row.changed[1])}
              </mark>
              {row.text.slice(row.changed[1])}
            </>
          ) : (
            row.text || ' '
          )}
        </div>
      ))}
    </pre>
  );
}
