import type { ILabShell } from '@jupyterlab/application';
import type { IDocumentManager } from '@jupyterlab/docmanager';
import type { DocumentRegistry } from '@jupyterlab/docregistry';
import type * as nbformat from '@jupyterlab/nbformat';
import type {
  INotebookModel,
  INotebookTracker,
  NotebookPanel
} from '@jupyterlab/notebook';
import { IDisposable } from '@lumino/disposable';
import type { Widget } from '@lumino/widgets';

import {
  BridgeRequest,
  IAppliedDelta,
  IBridgeResponse,
  ICellResult,
  INotebookResult,
  IOpenAnnouncement,
  OMITTED_KEY,
  OMITTED_TEXT_MARK
} from './bridgeWire';
import {
  applyEdit,
  NotebookEdit,
  NotebookEditError,
  setSourceMinimally
} from './notebookOps';
import { DEFAULT_RETRY_DELAYS } from './socket';

/**
 * Lets the server's notebook tools change the notebooks open in this tab, instead of their files
 * (hdsp_agent/documents/live.py holds the server side and the protocol).
 *
 * The tab tells the server which notebooks it has open and answers its requests (the messages are
 * typed in ./bridgeWire.ts): read the notebook as the user sees it (unsaved edits included), or one
 * cell of it with the model's version (an edit of that cell is refused if the version moved), apply an
 * edit (answered with the cell it changed and the model's version, not the whole notebook), take a
 * snapshot, restore one. Edits go
 * to the shared model, so they show at once, with or without real-time collaboration, and what the
 * user typed elsewhere stays. Text files open in a file editor are announced too: the agent's file
 * edits go into the editor (merged by the server with the user's unsaved typing) instead of to disk.
 * The tab saves only when the server asks, at the end of a turn in which the user had no unsaved
 * edits of their own in the document (hdsp_agent/documents/live.py, `settle`).
 */
export class NotebookBridge implements IDisposable {
  constructor(options: NotebookBridge.IOptions) {
    this._tracker = options.tracker;
    this._url = options.url;
    this._WebSocket = options.WebSocket;
    this._retryDelays = options.retryDelays ?? DEFAULT_RETRY_DELAYS;
    this._documents = options.documents ?? null;
    this._shell = options.shell ?? null;
    this._tracker.widgetAdded.connect(this._onWidgetAdded, this);
    this._tracker.forEach(panel => this._onWidgetAdded(this._tracker, panel));
    this._shell?.layoutModified.connect(this._onLayoutModified, this);
    this._onLayoutModified();
  }

  /**
   * The text files open in a file editor of this tab, by the path the server knows them by.
   */
  get editors(): Map<string, IEditorDocument> {
    const found = new Map<string, IEditorDocument>();
    if (!this._shell || !this._documents) {
      return found;
    }
    for (const widget of this._shell.widgets('main')) {
      const context = this._documents.contextForWidget(widget);
      if (
        context &&
        context.isReady &&
        !widget.isDisposed &&
        isTextEditor(widget, context)
      ) {
        found.set(localPath(context.path), { widget, context });
      }
    }
    return found;
  }

  get isDisposed(): boolean {
    return this._disposed;
  }

  /**
   * The paths announced to the server: notebooks of this tab whose content has loaded.
   */
  get openPaths(): string[] {
    const paths = new Set<string>();
    this._tracker.forEach(panel => {
      if (panel.context.isReady && !panel.isDisposed) {
        paths.add(localPath(panel.context.path));
      }
    });
    return [...paths].sort();
  }

  open(): void {
    if (!this._socket && !this._disposed) {
      this._connect();
    }
  }

  dispose(): void {
    if (this._disposed) {
      return;
    }
    this._disposed = true;
    window.clearTimeout(this._retryTimer);
    this._tracker.widgetAdded.disconnect(this._onWidgetAdded, this);
    this._shell?.layoutModified.disconnect(this._onLayoutModified, this);
    const socket = this._socket;
    this._socket = null;
    socket?.close();
  }

  /**
   * Answer one request from the server (public for tests).
   */
  handle(request: NotebookBridge.IRequest): NotebookBridge.IResponse {
    try {
      return { type: 'response', id: request.id, result: this._run(request) };
    } catch (error) {
      return errorResponse(request, error);
    }
  }

  /**
   * Answer a request that takes time (a save); the others are answered at once by `handle`.
   */
  async handleAsync(
    request: NotebookBridge.IRequest
  ): Promise<NotebookBridge.IResponse> {
    if (request.method === 'revert_text') {
      return this._revertText(request);
    }
    if (request.method !== 'save') {
      return this.handle(request);
    }
    try {
      // Saved by the tab, so JupyterLab knows the file it holds: no "File Changed" on the user's
      // next save.
      const editor = this.editors.get(localPath(request.path));
      const context = editor
        ? editor.context
        : this._panel(request.path).context;
      await context.save();
      return { type: 'response', id: request.id, result: {} };
    } catch (error) {
      return errorResponse(request, error);
    }
  }

  private _run(request: NotebookBridge.IRequest): Record<string, unknown> {
    if (request.method === 'read_text' || request.method === 'set_text') {
      return this._runText(request);
    }
    const panel = this._panel(request.path);
    const model = panel.context.model;
    switch (request.method) {
      case 'read':
        if (
          request.output_chars === undefined ||
          request.output_chars === null
        ) {
          return { notebook: notebookJSON(model) };
        }
        return {
          ...briefOutputs(
            notebookJSON(
              model,
              request.outputs_start ?? 0,
              request.outputs_stop ?? null
            ),
            request.output_chars
          )
        };
      case 'snapshot':
        return { notebook: notebookJSON(model) };
      case 'read_cell':
        return { ...readCell(model, request), version: this._version(model) };
      case 'apply': {
        // A progress push (no id) is answered by nobody: nothing to send back for it.
        if (request.id === null) {
          applyEdit(model, request.edit);
          return {};
        }
        const before = this._version(model);
        // The edit was computed from a read at `base_version`: a change since (the user typed) could
        // be overwritten by it.
        if (
          request.base_version !== undefined &&
          request.base_version !== null &&
          request.base_version !== before
        ) {
          throw new NotebookEditError(
            'E_NOTEBOOK_CHANGED',
            'the notebook changed after the agent read the cell; nothing was changed'
          );
        }
        const delta = appliedDelta(model, request.edit);
        // Every applied edit is a new version, whether or not the model's change signal came yet.
        const version = Math.max(this._version(model), before + 1);
        this._versions.set(model, version);
        try {
          revealChange(panel, request.edit, delta.index ?? null);
        } catch {
          // Showing the change is a courtesy: the edit is applied, its answer must go back.
        }
        return { ...delta, version };
      }
      case 'restore':
        model.sharedModel.transact(() => {
          model.fromJSON(request.notebook as nbformat.INotebookContent);
        });
        return {};
    }
    throw new NotebookEditError(
      'E_NOTEBOOK_BRIDGE',
      `unknown request ${String(request.method)}`
    );
  }

  private _runText(request: NotebookBridge.IRequest): Record<string, unknown> {
    const editor = this.editors.get(localPath(request.path));
    if (!editor) {
      throw new NotebookEditError(
        'E_NOTEBOOK_BRIDGE',
        'the file is no longer open in an editor of this JupyterLab tab'
      );
    }
    const shared = editor.context.model.sharedModel as unknown as ISharedText;
    const text = shared.getSource().replace(/\r\n/g, '\n');
    if (request.method !== 'set_text') {
      return { text, dirty: editor.context.model.dirty };
    }
    // The server merged the agent's edit into what it read: the user must not have typed since.
    if (text !== request.expected) {
      throw new NotebookEditError(
        'E_EDITOR_CHANGED',
        'the file changed in the editor while the edit was merged; try again'
      );
    }
    setSourceMinimally(shared, String(request.text));
    return {};
  }

  /**
   * Reload a file editor from disk after the server wrote the agent's edit there, as long as it still
   * shows `expected` with nothing unsaved: the user's typing is never thrown away.
   */
  private async _revertText(
    request: Extract<BridgeRequest, { method: 'revert_text' }>
  ): Promise<NotebookBridge.IResponse> {
    try {
      const editor = this.editors.get(localPath(request.path));
      const shared = editor?.context.model.sharedModel as unknown as
        ISharedText | undefined;
      const text = shared?.getSource().replace(/\r\n/g, '\n');
      if (!editor || editor.context.model.dirty || text !== request.expected) {
        return {
          type: 'response',
          id: request.id,
          result: { reverted: false }
        };
      }
      await editor.context.revert();
      return { type: 'response', id: request.id, result: { reverted: true } };
    } catch (error) {
      return errorResponse(request, error);
    }
  }

  private _onLayoutModified(): void {
    const announce = () => this._announce();
    for (const { widget, context } of this._openDocuments()) {
      if (this._watched.has(widget)) {
        continue;
      }
      this._watched.add(widget);
      void context.ready.then(announce, announce);
      context.pathChanged.connect(announce);
      widget.disposed.connect(() => {
        context.pathChanged.disconnect(announce);
        window.setTimeout(announce, 0);
      });
    }
    this._announce();
  }

  private _openDocuments(): IEditorDocument[] {
    const found: IEditorDocument[] = [];
    if (!this._shell || !this._documents) {
      return found;
    }
    for (const widget of this._shell.widgets('main')) {
      const context = this._documents.contextForWidget(widget);
      if (context && !context.path.endsWith('.ipynb')) {
        found.push({ widget, context });
      }
    }
    return found;
  }

  private _panel(path: string): NotebookPanel {
    const panel = this._tracker.find(
      candidate =>
        !candidate.isDisposed &&
        candidate.context.isReady &&
        localPath(candidate.context.path) === localPath(path)
    );
    if (!panel) {
      throw new NotebookEditError(
        'E_NOTEBOOK_BRIDGE',
        'the notebook is no longer open in this JupyterLab tab'
      );
    }
    return panel;
  }

  /**
   * The model's version: how many changes the tab has seen to it (the user's and the agent's), so
   * the server can tell whether a notebook it holds is still the tab's.
   */
  private _version(model: INotebookModel): number {
    if (!this._versions.has(model)) {
      this._versions.set(model, 0);
      model.contentChanged.connect(() =>
        this._versions.set(model, (this._versions.get(model) ?? 0) + 1)
      );
    }
    return this._versions.get(model) ?? 0;
  }

  private _onWidgetAdded(_: INotebookTracker, panel: NotebookPanel): void {
    const announce = () => this._announce();
    if (panel.context.model) {
      this._version(panel.context.model);
    }
    void panel.context.ready.then(announce, announce);
    panel.context.pathChanged.connect(announce);
    panel.disposed.connect(() => {
      panel.context.pathChanged.disconnect(announce);
      // The tracker forgets the panel after this signal: announce once it has.
      window.setTimeout(announce, 0);
    });
  }

  private _announce(): void {
    const paths = this.openPaths;
    const editors = this.editors;
    const key = [...paths, '', ...editors.keys()].join('\n');
    const socket = this._socket;
    if (
      socket &&
      socket.readyState === socket.OPEN &&
      key !== this._announced
    ) {
      // Panels announced for the first time have just loaded their notebook from the file (a page
      // reload, a notebook reopened): the server replays the agent's unsaved changes into them.
      const loaded = new Set<string>();
      this._tracker.forEach(panel => {
        if (
          panel.context.isReady &&
          !panel.isDisposed &&
          !this._announcedWidgets.has(panel)
        ) {
          loaded.add(localPath(panel.context.path));
          this._announcedWidgets.add(panel);
        }
      });
      editors.forEach(({ widget }, path) => {
        if (!this._announcedWidgets.has(widget)) {
          loaded.add(path);
          this._announcedWidgets.add(widget);
        }
      });
      const announcement: IOpenAnnouncement = {
        type: 'open',
        paths,
        editors: [...editors.keys()].sort(),
        loaded: [...loaded]
      };
      socket.send(JSON.stringify(announcement));
      this._announced = key;
    }
  }

  private _connect(): void {
    const socket = new this._WebSocket(this._url);
    this._socket = socket;
    socket.onopen = () => {
      this._attempt = 0;
      this._announced = null;
      this._announce();
    };
    socket.onmessage = (message: MessageEvent) => {
      let request: NotebookBridge.IRequest;
      try {
        request = JSON.parse(String(message.data));
      } catch {
        return;
      }
      if (request.type !== 'request') {
        return;
      }
      void this.handleAsync(request).then(response => {
        // Requests with no id only show progress (a running cell's outputs): nobody waits for them.
        if (request.id !== null && socket.readyState === socket.OPEN) {
          socket.send(JSON.stringify(response));
        }
      });
    };
    socket.onclose = () => {
      if (this._socket !== socket || this._disposed) {
        return;
      }
      this._socket = null;
      const delay =
        this._retryDelays[
          Math.min(this._attempt, this._retryDelays.length - 1)
        ];
      this._attempt++;
      this._retryTimer = window.setTimeout(() => this._connect(), delay);
    };
  }

  private _tracker: INotebookTracker;
  private _url: string;
  private _WebSocket: typeof WebSocket;
  private _retryDelays: number[];
  private _socket: WebSocket | null = null;
  private _attempt = 0;
  private _retryTimer = 0;
  private _announced: string | null = null;
  private _announcedWidgets = new WeakSet<Widget>();
  private _watched = new WeakSet<Widget>();
  private _versions = new WeakMap<INotebookModel, number>();
  private _documents: IDocumentManager | null;
  private _shell: ILabShell | null;
  private _disposed = false;
}

/**
 * A document open in the main area, with its context.
 */
interface IEditorDocument {
  widget: Widget;
  context: DocumentRegistry.Context;
}

/**
 * The text of a file editor's shared model (a YFile).
 */
interface ISharedText {
  getSource(): string;
  updateSource(start: number, end: number, value: string): void;
}

/**
 * A file editor (not a notebook, an image or a CSV viewer): its content has a code editor and its
 * model shares text.
 */
function isTextEditor(
  widget: Widget,
  context: DocumentRegistry.Context
): boolean {
  const content = (widget as { content?: { editor?: unknown } }).content;
  const shared = context.model.sharedModel as unknown as Partial<ISharedText>;
  return (
    !context.path.endsWith('.ipynb') &&
    content?.editor !== undefined &&
    typeof shared.getSource === 'function' &&
    typeof shared.updateSource === 'function'
  );
}

function errorResponse(
  request: NotebookBridge.IRequest,
  error: unknown
): NotebookBridge.IResponse {
  const code =
    error instanceof NotebookEditError ? error.code : 'E_NOTEBOOK_BRIDGE';
  const message = error instanceof Error ? error.message : String(error);
  return { type: 'response', id: request.id, error: { code, message } };
}

/**
 * The notebook as nbformat 4.5 JSON, every cell with its id. The model leaves ids out of notebooks
 * older than 4.5, but the shared model has them, and they are how the server addresses cells.
 * With `outputsStart`: only the code cells from `outputsStart` to `outputsStop` (excluded; null: the
 * last) keep their outputs, and the others' are never serialized (a brief read of the first 200 cells
 * of a notebook of 2,000 and 50 MB of plots).
 */
function notebookJSON(
  model: INotebookModel,
  outputsStart?: number,
  outputsStop: number | null = null
): nbformat.INotebookContent {
  if (outputsStart === undefined) {
    const whole = model.toJSON() as nbformat.INotebookContent;
    return withIds(model, whole);
  }
  const shared = model.sharedModel;
  const cells = shared.cells.map((cell, index): nbformat.ICell => {
    const kept =
      index >= outputsStart && (outputsStop === null || index < outputsStop);
    if (cell.cell_type !== 'code' || kept) {
      return cell.toJSON() as nbformat.ICell;
    }
    const code = cell as unknown as {
      execution_count: nbformat.ExecutionCount;
    };
    return {
      id: cell.getId(),
      cell_type: 'code',
      source: cell.getSource(),
      metadata: cell.getMetadata() as nbformat.ICodeCellMetadata,
      execution_count: code.execution_count ?? null,
      outputs: []
    };
  });
  return withIds(model, {
    metadata: shared.getMetadata() as nbformat.INotebookMetadata,
    nbformat: shared.nbformat,
    nbformat_minor: shared.nbformat_minor,
    cells
  });
}

function withIds(
  model: INotebookModel,
  content: nbformat.INotebookContent
): nbformat.INotebookContent {
  const cells = model.sharedModel.cells;
  content.cells.forEach((cell, index) => {
    cell.id = cells[index]?.getId() ?? cell.id;
  });
  if (content.nbformat === 4 && content.nbformat_minor < 5) {
    content.nbformat_minor = 5;
  }
  return content;
}

const IMAGE_MIME = /^image\/(png|jpeg|gif|webp)$/;

/**
 * `content` with its outputs' large payloads left out, for a read that needs sources and a line per
 * output (bridge_wire.ReadRequest): each image's data becomes "" with its byte size and first 44
 * base64 characters (enough for PNG and GIF dimensions) in the output's metadata, each text longer
 * than `chars` is cut with a mark. `chars` null: `content` as it is.
 */
export function briefOutputs(
  content: nbformat.INotebookContent,
  chars: number | null
): INotebookResult {
  if (chars === null) {
    return { notebook: content };
  }
  let omittedChars = 0;
  const cut = (value: nbformat.MultilineString): string => {
    const text = Array.isArray(value) ? value.join('') : String(value);
    if (text.length <= chars) {
      return text;
    }
    omittedChars += text.length - chars;
    return `${text.slice(0, chars)}${OMITTED_TEXT_MARK}${text.length - chars} more characters]`;
  };
  // New objects throughout: the model's JSON may share its outputs with the shared model.
  const brief = (output: nbformat.IOutput): nbformat.IOutput => {
    if (isStream(output)) {
      return { ...output, text: cut(output.text) };
    }
    const data = output.data as nbformat.IMimeBundle | undefined;
    if (!data || typeof data !== 'object') {
      return output;
    }
    const kept: nbformat.IMimeBundle = {};
    const omitted: Record<string, { bytes: number; head: string }> = {};
    for (const [mime, value] of Object.entries(data)) {
      if (IMAGE_MIME.test(mime)) {
        const encoded = (
          Array.isArray(value) ? value.join('') : String(value)
        ).replace(/\s/g, '');
        const padding = encoded.endsWith('==')
          ? 2
          : encoded.endsWith('=')
            ? 1
            : 0;
        omitted[mime] = {
          bytes: Math.floor((encoded.length * 3) / 4) - padding,
          head: encoded.slice(0, 44)
        };
        omittedChars += encoded.length;
        kept[mime] = '';
      } else if (typeof value === 'string' || Array.isArray(value)) {
        kept[mime] = cut(value as nbformat.MultilineString);
      } else {
        kept[mime] = value;
      }
    }
    const metadata =
      Object.keys(omitted).length > 0
        ? {
            ...((output.metadata as nbformat.OutputMetadata | undefined) ?? {}),
            [OMITTED_KEY]: omitted
          }
        : output.metadata;
    return { ...output, data: kept, metadata } as nbformat.IOutput;
  };
  const cells = content.cells.map(cell =>
    cell.cell_type === 'code'
      ? {
          ...cell,
          outputs: (cell as nbformat.ICodeCell).outputs.map(brief)
        }
      : cell
  );
  return { notebook: { ...content, cells }, omitted_chars: omittedChars };
}

function isStream(output: nbformat.IOutput): output is nbformat.IStream {
  return output.output_type === 'stream';
}

/**
 * Scroll the notebook to a cell the agent added, rewrote or moved, so the user sees the work land; not while
 * they are typing in another cell of it (the scroll would pull their cell away). Outputs do not scroll.
 */
function revealChange(
  panel: NotebookPanel,
  edit: NotebookEdit,
  index: number | null
): void {
  const changesCell =
    edit.op === 'insert_cell' ||
    edit.op === 'set_cell_source' ||
    edit.op === 'move_cell';
  if (!changesCell || index === null) {
    return;
  }
  const notebook = panel.content;
  const cell = notebook?.widgets[index];
  if (!cell) {
    return;
  }
  const focused = document.activeElement;
  const typingElsewhere =
    notebook.mode === 'edit' &&
    focused !== null &&
    notebook.node.contains(focused) &&
    !cell.node.contains(focused);
  if (!typingElsewhere) {
    // scrollToItem, not scrollToCell: that one also selects and activates the cell, which takes the
    // keyboard focus out of the sidebar (the composer, a waiting card) into the notebook.
    void notebook.scrollToItem(index, 'smart');
  }
}

/**
 * Apply `edit` and say what it changed: the touched cell before and after, found by id (indices
 * shift while the user works); the version is filled in by the caller.
 */
function appliedDelta(
  model: INotebookModel,
  edit: NotebookEdit
): Omit<IAppliedDelta, 'version'> {
  const cellId =
    edit.op === 'insert_cell' ? String(edit.cell.id) : edit.cell_id;
  const prior = cellAt(model, cellId);
  applyEdit(model, edit);
  const after = cellAt(model, cellId);
  return {
    index: after?.index ?? null,
    cell: after?.cell ?? null,
    prior_index: prior?.index ?? null,
    prior_cell: prior?.cell ?? null
  };
}

/**
 * The cell a `read_cell` asks for, by id or by index (negative: from the end), with what a tool needs
 * around it; the version is filled in by the caller.
 */
function readCell(
  model: INotebookModel,
  request: Extract<BridgeRequest, { method: 'read_cell' }>
): Omit<ICellResult, 'version'> {
  const cells = model.sharedModel.cells;
  let found: { index: number; cell: nbformat.ICell } | null = null;
  if (request.cell_id !== undefined && request.cell_id !== null) {
    found = cellAt(model, request.cell_id);
  } else if (request.index !== undefined && request.index !== null) {
    const index =
      request.index < 0 ? cells.length + request.index : request.index;
    if (index >= 0 && index < cells.length) {
      found = cellAt(model, cells[index].getId());
    }
  }
  if (!found) {
    const which =
      request.cell_id !== undefined && request.cell_id !== null
        ? `no cell with id '${request.cell_id}'`
        : `no cell at index ${String(request.index)} (the notebook has ${cells.length})`;
    throw new NotebookEditError('E_CELL_NOT_FOUND', which);
  }
  const metadata = model.sharedModel.metadata;
  const language = (metadata.language_info as { name?: unknown } | undefined)
    ?.name;
  return {
    index: found.index,
    cell_count: cells.length,
    cell: found.cell,
    kernelspec: (metadata.kernelspec as Record<string, unknown>) ?? {},
    language: typeof language === 'string' ? language : null
  };
}

/** The cell with id `cellId` as nbformat JSON (with its id) and its index; null when there is none. */
function cellAt(
  model: INotebookModel,
  cellId: string
): { index: number; cell: nbformat.ICell } | null {
  const cells = model.sharedModel.cells;
  const index = cells.findIndex(cell => cell.getId() === cellId);
  if (index < 0) {
    return null;
  }
  const cell = model.cells.get(index).toJSON();
  cell.id = cellId;
  return { index, cell };
}

/**
 * A path as the server knows it: without a drive prefix ("RTC:") or a leading slash.
 */
export function localPath(path: string): string {
  const colon = path.indexOf(':');
  if (colon > 0 && !path.slice(0, colon).includes('/')) {
    path = path.slice(colon + 1);
  }
  return path.replace(/^\/+/, '');
}

export namespace NotebookBridge {
  export interface IOptions {
    tracker: INotebookTracker;
    url: string;
    WebSocket: typeof WebSocket;
    retryDelays?: number[];
    /** With these, text files open in a file editor are announced and edited too. */
    documents?: IDocumentManager | null;
    shell?: ILabShell | null;
  }

  export type IRequest = BridgeRequest;
  export type IResponse = IBridgeResponse;
}
