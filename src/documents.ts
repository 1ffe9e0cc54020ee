import { ILabShell } from '@jupyterlab/application';
import { IDocumentManager } from '@jupyterlab/docmanager';
import { DocumentRegistry } from '@jupyterlab/docregistry';
import {
  INotebookTracker,
  NotebookActions,
  NotebookPanel
} from '@jupyterlab/notebook';
import { DisposableDelegate, IDisposable } from '@lumino/disposable';

import { ChatSession } from './chatSession';
import { ContextState } from './contextState';
import { IMentionSource } from './mentions';
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
  // A rename (e.g. "Untitled.ipynb" saved under a name) changes the path without changing the widget.
  let watched: DocumentRegistry.IContext<DocumentRegistry.IModel> | null = null;
  const watchCurrent = () => {
    watched?.pathChanged.disconnect(refresh);
    const widget = shell?.currentWidget ?? notebooks?.currentWidget ?? null;
    watched = (widget && documents?.contextForWidget(widget)) || null;
    watched?.pathChanged.connect(refresh);
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
    watched?.pathChanged.disconnect(refresh);
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
 * Show the agent's changes to open documents.
 *
 * Notebooks open here are changed live through the NotebookBridge (notebookBridge.ts), which leaves
 * them with unsaved changes; other files are changed on disk. When a tool that changes things finishes
 * on a path open here with no unsaved edits, the document is reloaded from disk so the user sees the
 * change; a document with unsaved edits is left alone, so nothing the user typed is lost.
 */
export function reloadChangedDocuments(
  model: AgentModel,
  documents: IDocumentManager
): IDisposable {
  let session: ChatSession | null = null;
  let openedAt = 0;
  const reload = (path: string) => {
    const widget = documents.findWidget(path);
    const context = widget ? documents.contextForWidget(widget) : undefined;
    if (context && !context.model.dirty) {
      void context.revert().catch(reason => {
        console.warn(`hdsp-agent: could not reload ${path}`, reason);
      });
    }
  };
  const onEvent = (_: ChatSession, event: AgentEvent) => {
    // The replay of an old conversation is history, not a change to show now.
    if (event.ts < openedAt) {
      return;
    }
    if (event.type === 'turn.undone') {
      // One line per restored change: "path: what".
      new Set(event.restored.map(line => line.split(': ')[0])).forEach(reload);
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
  const paths = new Set<string>();
  for (const value of [event.details?.path, args.path, args.filepath]) {
    if (typeof value === 'string' && value) {
      paths.add(value.replace(/^\.?\//, ''));
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
    variables: async prefix => {
      // The kernel's own completion knows what is defined; nothing runs in the user's namespace.
      const kernel = notebooks.currentWidget?.sessionContext.session?.kernel;
      if (!kernel) {
        return [];
      }
      const reply = await kernel.requestComplete({
        code: prefix,
        cursor_pos: prefix.length
      });
      return reply.content.status === 'ok' ? reply.content.matches : [];
    }
  };
}
