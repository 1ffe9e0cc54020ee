/**
 * The agent's changes, to review where they happened: every cell a turn inserted or edited is marked until
 * the user keeps it or undoes it (Cursor's and VS Code's pattern) — a later message does not take the mark
 * away — and every file the last turn's file tools changed (an open editor shows that file's hunks). Folded
 * from the conversation's events (a Keep or a cell's Undo is one too), so a reloaded page shows the same marks.
 */
import { ISignal, Signal } from '@lumino/signaling';

import { AgentEvent } from './events';
import { hunkKey, IHunk } from './hunks';

/** Notebook tools whose result names a cell the agent inserted or changed. */
const CELL_CHANGES: Record<string, IReviewMark['kind']> = {
  insert_cell: 'inserted',
  edit_cell: 'edited',
  run_cell: 'inserted'
};

/** A call's arguments from its final status (the JSON the model sent), or null when they do not parse. */
function callArguments(event: {
  arguments?: Record<string, any> | null;
  raw_arguments?: string | null;
}): Record<string, any> | null {
  if (event.arguments) {
    return event.arguments;
  }
  try {
    const parsed = JSON.parse(event.raw_arguments ?? '');
    return parsed && typeof parsed === 'object' ? parsed : null;
  } catch {
    return null;
  }
}

export interface IReviewMark {
  path: string;
  cellId: string;
  kind: 'inserted' | 'edited';
  /** The turn that made the change (its undo takes the mark away). */
  turnId: string;
}

/** A file the last turn's file tools changed; `version` counts its changes (its hunks are fetched again). */
export interface IFileReviewMark {
  path: string;
  version: number;
}

export class ReviewState {
  get marks(): readonly IReviewMark[] {
    return this._marks;
  }

  get files(): readonly IFileReviewMark[] {
    return this._files;
  }

  get changed(): ISignal<this, void> {
    return this._changed;
  }

  /** Take one event of the active conversation into account (live or replayed). */
  apply(event: AgentEvent): void {
    if (event.type === 'turn.start') {
      // The files' hunks are the last turn's (the server answers for that turn); the cells' marks stay.
      this._turnId = event.turn_id;
      this._clearFiles();
    } else if (event.type === 'turn.undone') {
      const undone = new Set(event.turn_ids ?? [event.turn_id]);
      this._clearFiles();
      this._setMarks(this._marks.filter(mark => !undone.has(mark.turnId)));
    } else if (event.type === 'cell.reviewed') {
      this.remove(event.path, event.cell_id);
    } else if (event.type === 'tool.status' && event.status === 'done') {
      // A shell command's result lists every file it changed that has an undo record
      // (tools/builtin/shell_changes.py).
      const shellChanges = event.details?.changed_files;
      if (Array.isArray(shellChanges)) {
        for (const change of shellChanges) {
          if (
            typeof change?.path === 'string' &&
            typeof change?.undo_id === 'string'
          ) {
            this._fileChanged(change.path);
          }
        }
        return;
      }
      // The file tools' results carry the undo record of the change (edit/pipeline.py's write_edit).
      const filePath = event.details?.path;
      if (
        !CELL_CHANGES[event.name] &&
        typeof event.details?.undo_id === 'string' &&
        typeof filePath === 'string'
      ) {
        this._fileChanged(filePath);
        return;
      }
      // A cell the agent only ran (run_cell with a cell_id) is the user's cell, not a change to review.
      const ranExisting =
        event.name === 'run_cell' &&
        typeof callArguments(event)?.cell_id === 'string';
      const kind = ranExisting ? undefined : CELL_CHANGES[event.name];
      const path = event.details?.path;
      const cellId = event.details?.cell_id;
      if (
        kind &&
        typeof path === 'string' &&
        typeof cellId === 'string' &&
        !this.find(path, cellId)
      ) {
        this._marks = [
          ...this._marks,
          { path, cellId, kind, turnId: this._turnId }
        ];
        this._changed.emit();
      }
    }
  }

  find(path: string, cellId: string): IReviewMark | undefined {
    return this._marks.find(
      mark => mark.path === path && mark.cellId === cellId
    );
  }

  remove(path: string, cellId: string): void {
    const before = this._marks.length;
    this._marks = this._marks.filter(
      mark => !(mark.path === path && mark.cellId === cellId)
    );
    if (this._marks.length !== before) {
      this._changed.emit();
    }
  }

  findFile(path: string): IFileReviewMark | undefined {
    return this._files.find(file => file.path === path);
  }

  /** The file's change is reviewed (all kept or undone): its mark goes. */
  removeFile(path: string): void {
    const before = this._files.length;
    this._files = this._files.filter(file => file.path !== path);
    this._kept.delete(path);
    this._agentHunks.delete(path);
    if (this._files.length !== before) {
      this._changed.emit();
    }
  }

  /** Keep one hunk of a file's change (by `hunkKey`): the editor stops showing it. */
  keepHunk(path: string, key: string): void {
    const kept = this._kept.get(path) ?? new Set<string>();
    kept.add(key);
    this._kept.set(path, kept);
    this._changed.emit();
  }

  keptHunks(path: string): ReadonlySet<string> {
    return this._kept.get(path) ?? new Set<string>();
  }

  /**
   * Of the hunks the server reports for a file now (everything since the turn, the user's edits too), those
   * to review: the agent's — the ones reported first after its latest change to the file — not kept yet.
   * A hunk the user edited since is theirs now: it is not offered for a one-click undo again.
   */
  reviewable(path: string, fetched: readonly IHunk[]): IHunk[] {
    const file = this.findFile(path);
    if (!file) {
      return [];
    }
    let agents = this._agentHunks.get(path);
    if (!agents || agents.version !== file.version) {
      agents = { version: file.version, keys: new Set(fetched.map(hunkKey)) };
      this._agentHunks.set(path, agents);
    }
    const kept = this.keptHunks(path);
    return fetched.filter(hunk => {
      const key = hunkKey(hunk);
      return agents.keys.has(key) && !kept.has(key);
    });
  }

  clear(): void {
    this._setMarks([]);
    this._clearFiles();
  }

  private _setMarks(marks: IReviewMark[]): void {
    if (marks.length !== this._marks.length) {
      this._marks = marks;
      this._changed.emit();
    }
  }

  private _clearFiles(): void {
    if (this._files.length > 0) {
      this._files = [];
      this._kept.clear();
      this._agentHunks.clear();
      this._changed.emit();
    }
  }

  private _fileChanged(path: string): void {
    const known = this.findFile(path);
    this._files = known
      ? this._files.map(file =>
          file === known ? { path, version: file.version + 1 } : file
        )
      : [...this._files, { path, version: 1 }];
    this._changed.emit();
  }

  private _marks: IReviewMark[] = [];
  private _turnId = '';
  private _files: IFileReviewMark[] = [];
  private _kept = new Map<string, Set<string>>();
  private _agentHunks = new Map<
    string,
    { version: number; keys: Set<string> }
  >();
  private _changed = new Signal<this, void>(this);
}
