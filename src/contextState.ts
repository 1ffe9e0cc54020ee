import { IDisposable } from '@lumino/disposable';
import { ISignal, Signal } from '@lumino/signaling';

import { ICellContext, IClientContext, IMention } from './tokens';

/**
 * What the user is looking at (fed by the notebook tracker) and what of it they keep attached to the
 * next message. Each part shows as a chip the user can remove; removals last until the message is
 * sent or another document becomes active.
 */
export class ContextState implements IDisposable {
  /**
   * Where `refresh()` reads the current context (the notebook tracker in the app).
   */
  provider: (() => ContextState.ICurrent) | null = null;

  /**
   * The active document, whether or not it is attached.
   */
  get documentPath(): string | null {
    return this._current.documentPath;
  }

  /**
   * The selected cells (the active cell when nothing else is selected).
   */
  get cells(): readonly ICellContext[] {
    return this._current.cells;
  }

  get documentAttached(): boolean {
    return this._current.documentPath !== null && !this._documentRemoved;
  }

  get cellsAttached(): boolean {
    return (
      this.documentAttached &&
      this._current.cells.length > 0 &&
      !this._cellsRemoved
    );
  }

  get changed(): ISignal<this, void> {
    return this._changed;
  }

  get isDisposed(): boolean {
    return this._isDisposed;
  }

  /**
   * The tracker saw the user move: another document, another cell or selection.
   */
  update(current: ContextState.ICurrent): void {
    if (current.documentPath !== this._current.documentPath) {
      this._documentRemoved = false;
      this._cellsRemoved = false;
    }
    this._current = { ...current, cells: [...current.cells] };
    this._changed.emit();
  }

  /**
   * Read the current context from the provider (e.g. right before sending, for fresh cell sources).
   */
  refresh(): void {
    if (this.provider) {
      this.update(this.provider());
    }
  }

  /**
   * What the user mentioned with `@` in the message being written (files, cells, kernel variables).
   */
  get mentions(): readonly IMention[] {
    return this._mentions;
  }

  addMention(mention: IMention): void {
    if (
      !this._mentions.some(item => mentionKey(item) === mentionKey(mention))
    ) {
      this._mentions = [...this._mentions, mention];
      this._changed.emit();
    }
  }

  removeMention(mention: IMention): void {
    this._mentions = this._mentions.filter(
      item => mentionKey(item) !== mentionKey(mention)
    );
    this._changed.emit();
  }

  removeDocument(): void {
    this._documentRemoved = true;
    this._changed.emit();
  }

  removeCells(): void {
    this._cellsRemoved = true;
    this._changed.emit();
  }

  /**
   * Attach everything again (after a message was sent).
   */
  reset(): void {
    if (
      this._documentRemoved ||
      this._cellsRemoved ||
      this._mentions.length > 0
    ) {
      this._documentRemoved = false;
      this._cellsRemoved = false;
      this._mentions = [];
      this._changed.emit();
    }
  }

  /**
   * The context to send: only the parts still attached.
   */
  attached(): IClientContext {
    const mentions =
      this._mentions.length > 0 ? { mentions: [...this._mentions] } : {};
    if (!this.documentAttached || this._current.documentPath === null) {
      return mentions;
    }
    const context: IClientContext = {
      ...mentions,
      active_document: { path: this._current.documentPath }
    };
    if (this._current.activeCellId) {
      context.active_cell_id = this._current.activeCellId;
    }
    if (this.cellsAttached) {
      context.selected_cells = this._current.cells.map(cell => ({ ...cell }));
    }
    return context;
  }

  dispose(): void {
    if (this._isDisposed) {
      return;
    }
    this._isDisposed = true;
    Signal.clearData(this);
  }

  private _mentions: IMention[] = [];
  private _current: ContextState.ICurrent = {
    documentPath: null,
    cells: [],
    activeCellId: null
  };
  private _documentRemoved = false;
  private _cellsRemoved = false;
  private _isDisposed = false;
  private _changed = new Signal<this, void>(this);
}

export namespace ContextState {
  export interface ICurrent {
    documentPath: string | null;
    cells: readonly ICellContext[];
    activeCellId: string | null;
  }
}

/**
 * One mention's identity: the same file, cell or variable is attached once.
 */
export function mentionKey(mention: IMention): string {
  switch (mention.kind) {
    case 'file':
      return `file:${mention.path}`;
    case 'cell':
      return `cell:${mention.cell_id}`;
    case 'variable':
      return `variable:${mention.name}`;
  }
}
