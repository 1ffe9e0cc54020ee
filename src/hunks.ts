/**
 * The hunks of the agent's change to a file (from `GET sessions/{id}/hunks`, hdsp_agent/agent/hunks.py) and
 * where they sit in an editor's document. Pure: the CodeMirror extension (fileReviewMarks.ts) draws what
 * these functions decide.
 *
 * Lines are the text split at "\n", as the server splits it and as CodeMirror numbers them: line index i
 * of a hunk is editor line i + 1.
 */

/** One change: `old_lines` at `old_start` before the turn became `new_lines` at `new_start` now (0-based). */
export interface IHunk {
  old_start: number;
  old_lines: string[];
  new_start: number;
  new_lines: string[];
}

/** A hunk found in the document: its new lines are lines `line`… of the document (0-based). */
export interface ILocatedHunk {
  hunk: IHunk;
  line: number;
}

/** Identifies a hunk by its content (what Keep remembers): line numbers move when the user types above. */
export function hunkKey(hunk: IHunk): string {
  return JSON.stringify([hunk.old_lines, hunk.new_lines]);
}

function matchesAt(lines: readonly string[], at: number, hunk: IHunk): boolean {
  if (at < 0 || at + hunk.new_lines.length > lines.length) {
    return false;
  }
  return hunk.new_lines.every((text, offset) => lines[at + offset] === text);
}

/**
 * Where each hunk is in the document: at its `new_start` when its new lines are there, else at the nearest
 * place they are (the user typed above it since the hunks were computed). A hunk whose lines are not in the
 * document any more (the user edited them) is left out: it can no longer be undone on its own.
 *
 * A pure deletion (no new lines) has nothing to check: it sits at `new_start`, within the document.
 */
export function locateHunks(
  lines: readonly string[],
  hunks: readonly IHunk[]
): ILocatedHunk[] {
  const located: ILocatedHunk[] = [];
  for (const hunk of hunks) {
    if (hunk.new_lines.length === 0) {
      located.push({ hunk, line: Math.min(hunk.new_start, lines.length) });
      continue;
    }
    let found = -1;
    for (let distance = 0; distance <= lines.length; distance++) {
      if (matchesAt(lines, hunk.new_start + distance, hunk)) {
        found = hunk.new_start + distance;
        break;
      }
      if (distance > 0 && matchesAt(lines, hunk.new_start - distance, hunk)) {
        found = hunk.new_start - distance;
        break;
      }
    }
    if (found >= 0) {
      located.push({ hunk, line: found });
    }
  }
  return located;
}

/** What the editor draws for one located hunk. */
export interface IHunkMarks {
  /** The document lines (0-based) the agent wrote: each gets a mark. */
  changedLines: number[];
  /**
   * The line (0-based) above which the removed lines and the Keep / Undo bar go; `lines.length` means
   * below the last line.
   */
  barLine: number;
  /** The lines the agent removed or replaced, shown struck through in the bar. */
  removed: string[];
}

export function hunkMarks(located: ILocatedHunk): IHunkMarks {
  const { hunk, line } = located;
  return {
    changedLines: hunk.new_lines.map((_, offset) => line + offset),
    barLine: line,
    removed: hunk.old_lines
  };
}
