import { ILabShell } from '@jupyterlab/application';
import { IDocumentManager } from '@jupyterlab/docmanager';
import { DocumentRegistry } from '@jupyterlab/docregistry';
import {
  INotebookTracker,
  NotebookActions,
  NotebookPanel
} from '@jupyterlab/notebook';
import { Kernel, KernelMessage } from '@jupyterlab/services';
import { DisposableDelegate, IDisposable } from '@lumino/disposable';

import { ChatSession } from './chatSession';
import { ContextState } from './contextState';
import { IKernelName, IMentionSource } from './mentions';
import { AgentModel } from './model';
import { AgentEvent, ICellContext, IToolStatusEvent } from './tokens';

/**
 * Cells attached to a message at most, and characters of each cell's source.
 */
const MAX_CELLS = 20;
const MAX_SOURCE = 4000;

export interface IDocumentServices {
  shell: ILabShell | null;
  notebooks: INotebookTracker | null;
  documents: IDocumentManager | null;
}

/**
 * What the user is looking at now: the main area's document (else the last notebook) and, in a
 * notebook, the selected cells (the active cell when nothing else is selected).
 */
export function currentContext(
  services: IDocumentServices
): ContextState.ICurrent {
  const { shell, notebooks, documents } = services;
  const widget = shell?.currentWidget ?? null;
  const documentContext = widget
    ? documents?.contextForWidget(widget)
    : undefined;
  const notebook = notebooks?.currentWidget ?? null;
  const documentPath = documentContext?.path ?? notebook?.context.path ?? null;
  if (!notebook || notebook.context.path !== documentPath) {
    return { documentPath, cells: [], activeCellId: null };
  }
  const content = notebook.content;
  const cells: ICellContext[] = [];
  content.widgets.forEach((cell, index) => {
    if (cells.length < MAX_CELLS && content.isSelectedOrActive(cell)) {
      cells.push({
        id: cell.model.id,
        index,
        source: cell.model.sharedModel.getSource().slice(0, MAX_SOURCE)
      });
    }
  });
  return {
    documentPath,
    cells,
    activeCellId: content.activeCell?.model.id ?? null
  };
}

/**
 * Keep the model's context in step with the user's moves between documents, cells and selections.
 */
export function trackContext(
  model: AgentModel,
  services: IDocumentServices
): IDisposable {
  const refresh = () => model.context.update(currentContext(services));
  model.context.provider = () => currentContext(services);
  const { shell, notebooks, documents } = services;
  // A rename (e.g. "Untitled.ipynb" saved under a name) changes the path without changing the widget: the
  // same document for its chats.
  let watched: DocumentRegistry.IContext<DocumentRegistry.IModel> | null = null;
  let watchedPath: string | null = null;
  const renamed = (_: unknown, path: string) => {
    if (watchedPath !== null && watchedPath !== path) {
      model.notebookRenamed(watchedPath, path);
    }
    watchedPath = path;
    refresh();
  };
  const watchCurrent = () => {
    watched?.pathChanged.disconnect(renamed);
    const widget = shell?.currentWidget ?? notebooks?.currentWidget ?? null;
    watched = (widget && documents?.contextForWidget(widget)) || null;
    watchedPath = watched?.path ?? null;
    watched?.pathChanged.connect(renamed);
    refresh();
  };
  shell?.currentChanged.connect(watchCurrent);
  notebooks?.currentChanged.connect(watchCurrent);
  notebooks?.activeCellChanged.connect(refresh);
  notebooks?.selectionChanged.connect(refresh);
  watchCurrent();
  return new DisposableDelegate(() => {
    shell?.currentChanged.disconnect(watchCurrent);
    notebooks?.currentChanged.disconnect(watchCurrent);
    notebooks?.activeCellChanged.disconnect(refresh);
    notebooks?.selectionChanged.disconnect(refresh);
    watched?.pathChanged.disconnect(renamed);
    model.context.provider = null;
  });
}

/**
 * Put code in a new cell below the active cell of the current notebook, optionally running it.
 * Returns the notebook, or null when no notebook is open.
 */
export async function insertCode(
  notebooks: INotebookTracker,
  code: string,
  run: boolean
): Promise<NotebookPanel | null> {
  const panel = notebooks.currentWidget;
  if (!panel) {
    return null;
  }
  const notebook = panel.content;
  NotebookActions.insertBelow(notebook);
  const cell = notebook.activeCell;
  if (cell) {
    cell.model.sharedModel.setSource(code);
  }
  if (run) {
    await NotebookActions.run(notebook, panel.sessionContext);
  }
  return panel;
}

/**
 * A path as the server names documents: the Jupyter contents path, without a drive ("RTC:") or a leading
 * slash.
 */
export function contentsPath(path: string): string {
  const colon = path.indexOf(':');
  if (colon > 0 && !path.slice(0, colon).includes('/')) {
    path = path.slice(colon + 1);
  }
  return path.replace(/^\.?\/+/, '');
}

/**
 * Every document context open in the main area (one per document and model type: a notebook also open as
 * JSON has two), with the server's form of its path.
 */
function openContexts(
  shell: ILabShell | null,
  documents: IDocumentManager
): DocumentRegistry.Context[] {
  const contexts = new Set<DocumentRegistry.Context>();
  for (const widget of shell?.widgets('main') ?? []) {
    const context = documents.contextForWidget(widget);
    if (context) {
      contexts.add(context as DocumentRegistry.Context);
    }
  }
  return [...contexts];
}

/**
 * The documents open with unsaved changes, as contents paths (what an undo must not write under).
 */
export function unsavedPaths(
  shell: ILabShell | null,
  documents: IDocumentManager
): string[] {
  return openContexts(shell, documents)
    .filter(context => context.model.dirty)
    .map(context => contentsPath(context.path));
}

/**
 * Show the agent's changes to open documents.
 *
 * Notebooks open here are changed live through the NotebookBridge (notebookBridge.ts), which leaves
 * them with unsaved changes; other files are changed on disk. When a tool that changes things finishes
 * on a path open here with no unsaved edits, the document is reloaded from disk so the user sees the
 * change; a document with unsaved edits is left alone, so nothing the user typed is lost. After an undo
 * or a redo, every open view of every document it touched is reloaded the same way (a view left showing
 * the agent's version would write it back on the next save); the server refuses to write a file on disk
 * under unsaved changes (see `unsavedPaths`), and changes open notebooks live.
 *
 * Paths are compared in one form, the Jupyter contents path the server's events use.
 */
export function reloadChangedDocuments(
  model: AgentModel,
  documents: IDocumentManager,
  shell: ILabShell | null = null
): IDisposable {
  let session: ChatSession | null = null;
  let openedAt = 0;
  const reload = (path: string) => {
    const wanted = contentsPath(path);
    let contexts = openContexts(shell, documents).filter(
      context => contentsPath(context.path) === wanted
    );
    if (!shell) {
      const widget = documents.findWidget(wanted);
      const context = widget ? documents.contextForWidget(widget) : undefined;
      contexts = context ? [context as DocumentRegistry.Context] : [];
    }
    for (const context of contexts) {
      if (!context.model.dirty) {
        void context.revert().catch(reason => {
          console.warn(`hdsp-agent: could not reload ${wanted}`, reason);
        });
      }
    }
  };
  model.unsavedPaths = () => unsavedPaths(shell, documents);
  const onEvent = (_: ChatSession, event: AgentEvent) => {
    // The replay of an old conversation is history, not a change to show now.
    if (event.ts < openedAt) {
      return;
    }
    if (event.type === 'turn.undone' || event.type === 'turn.redone') {
      // Older logs have no paths: then one line per restored change, "path: what".
      const paths =
        event.paths ?? event.restored.map(line => line.split(': ')[0]);
      new Set(paths).forEach(reload);
      return;
    }
    if (event.type !== 'tool.status') {
      return;
    }
    if (event.status !== 'done' && event.status !== 'errored') {
      return;
    }
    const tool = model.tools.find(info => info.name === event.name);
    if (tool?.read_only) {
      return;
    }
    changedPaths(event).forEach(reload);
  };
  const onActive = (_: AgentModel, active: ChatSession | null) => {
    session?.eventApplied.disconnect(onEvent);
    session = active;
    openedAt = Date.now() / 1000;
    session?.eventApplied.connect(onEvent);
  };
  model.activeSessionChanged.connect(onActive);
  onActive(model, model.activeSession);
  return new DisposableDelegate(() => {
    model.activeSessionChanged.disconnect(onActive);
    session?.eventApplied.disconnect(onEvent);
    model.unsavedPaths = null;
  });
}

function changedPaths(event: IToolStatusEvent): string[] {
  let args: Record<string, unknown> = event.arguments ?? {};
  if (!event.arguments && event.raw_arguments) {
    try {
      args = JSON.parse(event.raw_arguments) ?? {};
    } catch {
      // Arguments the model garbled: the details' path (if any) is all there is.
    }
  }
  // The result's path is the server's contents path; the model's own arguments may be absolute or
  // "./"-prefixed, so they count only when the result names none (a failed call).
  const named = event.details?.path;
  const candidates =
    typeof named === 'string' && named ? [named] : [args.path, args.filepath];
  const paths = new Set<string>();
  for (const value of candidates) {
    if (typeof value === 'string' && value) {
      paths.add(contentsPath(value));
    }
  }
  return [...paths];
}

/**
 * The cells and kernel of the current notebook, for the composer's `@` mentions.
 */
export function notebookMentionSource(
  notebooks: INotebookTracker
): IMentionSource {
  return {
    cells: () => {
      const panel = notebooks.currentWidget;
      return (panel?.content.widgets ?? []).map((cell, index) => ({
        cell_id: cell.model.id,
        index,
        source: cell.model.sharedModel.getSource()
      }));
    },
    variables: async () => {
      const kernel = notebooks.currentWidget?.sessionContext.session?.kernel;
      if (!kernel) {
        return [];
      }
      return kernelNamespace(kernel);
    }
  };
}

/**
 * The user's names in a Python kernel: IPython's own user namespace without what IPython put there itself
 * (`In`, `Out`, `exit`, …), no `_`-names; each with whether it is a module. Read with a silent execute's
 * `user_expressions`: one expression evaluated in the namespace, nothing assigned, no history, no execution
 * count. Completion (`complete_request`) was the old source: it offers keywords and builtins (`def`, `dir`,
 * `dict`) before the user's `df`, and Jedi's first completion takes seconds. A kernel that is not IPython
 * answers an error and the composer offers no variables.
 */
export async function kernelNamespace(
  kernel: Kernel.IKernelConnection
): Promise<IKernelName[]> {
  const future = kernel.requestExecute({
    code: '',
    silent: true,
    store_history: false,
    user_expressions: { names: NAMESPACE_EXPRESSION },
    allow_stdin: false,
    stop_on_error: false
  });
  const reply = await future.done;
  const content = reply.content as KernelMessage.IExecuteReply & {
    user_expressions?: Record<
      string,
      { status?: string; data?: Record<string, string> }
    >;
  };
  const names = content.user_expressions?.names;
  const text = names?.status === 'ok' ? names.data?.['text/plain'] : undefined;
  if (typeof text !== 'string' || text.length < 2) {
    return [];
  }
  // The expression's value is one str of "name" or "name/m" words; its repr is that text in quotes.
  return text
    .slice(1, -1)
    .split(' ')
    .filter(word => word)
    .map(word =>
      word.endsWith('/m')
        ? { name: word.slice(0, -2), module: true }
        : { name: word, module: false }
    );
}

const NAMESPACE_EXPRESSION =
  "(lambda ip, missing: ' '.join(name + ('/m' if type(value).__name__ == 'module' else '') " +
  'for name, value in list(ip.user_ns.items()) ' +
  "if name.isidentifier() and not name.startswith('_') " +
  'and value is not ip.user_ns_hidden.get(name, missing)))(get_ipython(), object())';
