/**
 * The agent's changes to open notebooks, to review where they happened: every cell the last turn inserted or
 * edited is marked until the user keeps it or undoes it (Cursor's and VS Code's pattern). Folded from the
 * conversation's events, so a reloaded page shows the same marks.
 */
import { ISignal, Signal } from '@lumino/signaling';

import { AgentEvent } from './events';

/** Notebook tools whose result names a cell the agent inserted or changed. */
const CELL_CHANGES: Record<string, IReviewMark['kind']> = {
  insert_cell: 'inserted',
  edit_cell: 'edited',
  run_cell: 'inserted'
};

export interface IReviewMark {
  path: string;
  cellId: string;
  kind: 'inserted' | 'edited';
}

export class ReviewState {
  get marks(): readonly IReviewMark[] {
    return this._marks;
  }

  get changed(): ISignal<this, void> {
    return this._changed;
  }

  /** Take one event of the active conversation into account (live or replayed). */
  apply(event: AgentEvent): void {
    if (event.type === 'turn.start' || event.type === 'turn.undone') {
      this.clear();
    } else if (event.type === 'tool.status' && event.status === 'done') {
      const kind = CELL_CHANGES[event.name];
      const path = event.details?.path;
      const cellId = event.details?.cell_id;
      if (
        kind &&
        typeof path === 'string' &&
        typeof cellId === 'string' &&
        !this.find(path, cellId)
      ) {
        this._marks = [...this._marks, { path, cellId, kind }];
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

  clear(): void {
    if (this._marks.length > 0) {
      this._marks = [];
      this._changed.emit();
    }
  }

  private _marks: IReviewMark[] = [];
  private _changed = new Signal<this, void>(this);
}
