/**
 * The review of the agent's file edits in the file editor itself: each hunk of the last turn's change to an
 * open file is shown inline — the lines the agent wrote marked in the margin, the lines it removed above
 * them struck through — under a small "agent" label with Keep and Undo. Until kept the change is live (it is
 * on disk and in the editor); Undo puts that hunk back as it was, on the server (which refuses when its
 * lines were edited since). The sidebar's Keep all / Undo all (ReviewBar) count the file too.
 *
 * The hunks come from the server (`GET sessions/{id}/hunks`, diffed against the turn's prior content);
 * where they sit in the document is hunks.ts's business, drawing them is a CodeMirror 6 state field here.
 */
import { Notification } from '@jupyterlab/apputils';
import { ILabShell } from '@jupyterlab/application';
import { IDocumentManager } from '@jupyterlab/docmanager';
import { DocumentRegistry } from '@jupyterlab/docregistry';
import { TranslationBundle } from '@jupyterlab/translation';
import {
  EditorState,
  Extension,
  Range,
  StateEffect,
  StateField
} from '@codemirror/state';
import {
  Decoration,
  DecorationSet,
  EditorView,
  WidgetType
} from '@codemirror/view';
import { Widget } from '@lumino/widgets';

import { hunkKey, hunkMarks, IHunk, locateHunks } from './hunks';
import { AgentModel } from './model';

/** What the hunk bar's buttons do, and its words. */
interface IHunkActions {
  keep(hunk: IHunk): void;
  undo(hunk: IHunk): void;
  trans: TranslationBundle;
}

interface IShownHunks {
  hunks: readonly IHunk[];
  actions: IHunkActions | null;
  decorations: DecorationSet;
}

const showHunks = StateEffect.define<{
  hunks: readonly IHunk[];
  actions: IHunkActions;
}>();

class HunkBar extends WidgetType {
  constructor(
    readonly hunk: IHunk,
    readonly actions: IHunkActions
  ) {
    super();
  }

  eq(other: HunkBar): boolean {
    return hunkKey(other.hunk) === hunkKey(this.hunk);
  }

  toDOM(): HTMLElement {
    const { trans } = this.actions;
    const bar = document.createElement('div');
    bar.className = 'jp-hdsp-HunkBar';
    bar.setAttribute('role', 'group');
    bar.setAttribute('aria-label', trans.__('Change by the agent'));
    const head = document.createElement('div');
    head.className = 'jp-hdsp-HunkBar-head';
    const label = document.createElement('span');
    label.className = 'jp-hdsp-HunkBar-label';
    label.textContent = trans.__('agent');
    head.append(
      label,
      button(
        trans.__('Keep'),
        trans.__('Keep the agent’s change to these lines'),
        () => this.actions.keep(this.hunk)
      ),
      button(
        trans.__('Undo'),
        trans.__('Put back what these lines were before the agent'),
        () => this.actions.undo(this.hunk)
      )
    );
    bar.append(head);
    for (const line of this.hunk.old_lines) {
      const removed = document.createElement('div');
      removed.className = 'jp-hdsp-HunkBar-removed';
      removed.textContent = line || ' ';
      bar.append(removed);
    }
    return bar;
  }

  ignoreEvent(): boolean {
    return true; // clicks on the buttons are the bar's, not the editor's
  }
}

function button(
  text: string,
  title: string,
  onClick: () => void
): HTMLButtonElement {
  const element = document.createElement('button');
  element.type = 'button';
  element.className = 'jp-mod-styled jp-hdsp-ReviewBadge-button';
  element.textContent = text;
  element.title = title;
  element.addEventListener('mousedown', event => event.preventDefault()); // the cursor stays where it is
  element.addEventListener('click', event => {
    event.stopPropagation();
    onClick();
  });
  return element;
}

const CHANGED_LINE = Decoration.line({ class: 'jp-hdsp-HunkLine' });

function decorate(
  state: EditorState,
  hunks: readonly IHunk[],
  actions: IHunkActions | null
): DecorationSet {
  if (!actions || hunks.length === 0) {
    return Decoration.none;
  }
  const { doc } = state;
  const lines = doc.toString().split('\n');
  const ranges: Range<Decoration>[] = [];
  for (const located of locateHunks(lines, hunks)) {
    const marks = hunkMarks(located);
    const bar = Decoration.widget({
      widget: new HunkBar(located.hunk, actions),
      block: true,
      side: marks.barLine < doc.lines ? -1 : 1
    });
    ranges.push(
      bar.range(
        marks.barLine < doc.lines
          ? doc.line(marks.barLine + 1).from
          : doc.length
      )
    );
    for (const line of marks.changedLines) {
      ranges.push(CHANGED_LINE.range(doc.line(line + 1).from));
    }
  }
  return Decoration.set(ranges, true);
}

/**
 * The hunks shown in one editor. A user's edit moves them with the text; one whose own lines the user edited
 * drops out (it can no longer be undone on its own).
 */
const hunkField = StateField.define<IShownHunks>({
  create: () => ({ hunks: [], actions: null, decorations: Decoration.none }),
  update(value, transaction) {
    let { hunks, actions } = value;
    let changed = transaction.docChanged;
    for (const effect of transaction.effects) {
      if (effect.is(showHunks)) {
        ({ hunks, actions } = effect.value);
        changed = true;
      }
    }
    if (!changed) {
      return value;
    }
    return {
      hunks,
      actions,
      decorations: decorate(transaction.state, hunks, actions)
    };
  },
  provide: field =>
    EditorView.decorations.from(field, value => value.decorations)
});

export const fileReviewExtension: Extension = hunkField;

/** The CodeMirror editor of a file editor widget, if it is one. */
interface ICodeMirrorHost {
  injectExtension(extension: Extension): void;
  editor: EditorView;
}

function codeMirrorOf(widget: Widget): ICodeMirrorHost | null {
  const editor = (widget as unknown as { content?: { editor?: unknown } })
    .content?.editor as Partial<ICodeMirrorHost> | undefined;
  if (
    editor &&
    typeof editor.injectExtension === 'function' &&
    editor.editor instanceof EditorView
  ) {
    return editor as ICodeMirrorHost;
  }
  return null;
}

/**
 * Keep the hunks shown in open file editors in step with the model's review state: on a new change, when a
 * file is opened, after Keep and Undo.
 */
export function showFileReviewMarks(
  model: AgentModel,
  documents: IDocumentManager,
  shell: ILabShell | null,
  trans: TranslationBundle
): void {
  // Per editor: the review state it shows (the file's version and how many hunks were kept), so a layout
  // change does not fetch again.
  const shown = new Map<
    string,
    { view: EditorView; stamp: string; context: DocumentRegistry.Context }
  >();
  const injected = new WeakSet<EditorView>();

  const fetchAndShow = async (
    path: string,
    view: EditorView,
    hunks?: IHunk[]
  ) => {
    const actions: IHunkActions = {
      trans,
      keep: hunk => model.keepHunk(path, hunk),
      undo: hunk => void undo(path, hunk)
    };
    try {
      const current = hunks ?? (await model.fileHunks(path));
      view.dispatch({ effects: showHunks.of({ hunks: current, actions }) });
    } catch (error) {
      console.warn(`hdsp-agent: could not read the changes to ${path}`, error);
    }
  };

  const undo = async (path: string, hunk: IHunk) => {
    const entry = shown.get(path);
    try {
      // The undo is made on disk. With unsaved typing in the editor it would have to save that typing (what
      // the user has not chosen to) or reload over it (losing it): neither; the user saves or reverts first.
      if (entry?.context.model.dirty) {
        throw new Error(
          trans.__(
            '%1 has unsaved changes: save or revert them first, then undo',
            path
          )
        );
      }
      await model.undoHunk(path, hunk);
    } catch (error) {
      Notification.error(
        trans.__('This change was not undone: %1', (error as Error).message),
        { autoClose: 6000 }
      );
    }
    // Show the file as it is on disk now: undone, or changed by someone else (the reason of a refusal).
    if (entry && !entry.context.model.dirty) {
      await entry.context.revert().catch(reason => {
        console.warn(`hdsp-agent: could not reload ${path}`, reason);
      });
    }
    if (entry) {
      entry.stamp = '';
    }
    sync();
  };

  const sync = () => {
    for (const [path, entry] of shown) {
      if (
        !model.review.findFile(path) ||
        entry.view.dom.isConnected === false
      ) {
        entry.view.dispatch({
          effects: showHunks.of({
            hunks: [],
            actions: { trans, keep: () => undefined, undo: () => undefined }
          })
        });
        shown.delete(path);
      }
    }
    for (const file of model.review.files) {
      // The text editor's view of the file, also when another viewer is the file's default (CSV, JSON).
      const widget =
        documents.findWidget(file.path, 'Editor') ??
        documents.findWidget(file.path);
      const context = widget ? documents.contextForWidget(widget) : undefined;
      const host = widget ? codeMirrorOf(widget) : null;
      if (!host || !context) {
        continue;
      }
      const view = host.editor;
      if (!injected.has(view)) {
        host.injectExtension(fileReviewExtension);
        injected.add(view);
      }
      const stamp = `${file.version}:${model.review.keptHunks(file.path).size}`;
      const entry = shown.get(file.path);
      if (entry && entry.view === view && entry.stamp === stamp) {
        continue;
      }
      shown.set(file.path, { view, stamp, context });
      void fetchAndShow(file.path, view);
    }
  };

  model.review.changed.connect(sync);
  // A file opened after the agent changed it shows its hunks too.
  shell?.layoutModified.connect(() => requestAnimationFrame(sync));
  shell?.currentChanged.connect(sync);
}
