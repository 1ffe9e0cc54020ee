/**
 * The review in the notebook itself: each cell the agent's last turn inserted or edited gets a gutter mark and
 * an "agent" badge with Keep and Undo; the sidebar offers Keep all / Undo all (ReviewBar). Until kept, the
 * change is live: the user can run it, and Undo puts back exactly what was there.
 */
import { Notification } from '@jupyterlab/apputils';
import { Cell } from '@jupyterlab/cells';
import { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';
import { TranslationBundle } from '@jupyterlab/translation';
import { PanelLayout, Widget } from '@lumino/widgets';

import { AgentModel } from './model';
import { localPath } from './notebookBridge';

const MARKED = 'jp-hdsp-AgentChanged';

class ReviewBadge extends Widget {
  constructor(
    readonly path: string,
    readonly cellId: string,
    kind: 'inserted' | 'edited',
    model: AgentModel,
    trans: TranslationBundle
  ) {
    super();
    this.addClass('jp-hdsp-ReviewBadge');
    const label = document.createElement('span');
    label.className = 'jp-hdsp-ReviewBadge-label';
    label.textContent =
      kind === 'inserted'
        ? trans.__('agent: new cell')
        : trans.__('agent: edited');
    const keep = button(
      trans.__('Keep'),
      trans.__('Keep the agent’s change to this cell'),
      () =>
        model
          .keepCell(path, cellId)
          .catch(error =>
            Notification.error(
              trans.__('This cell was not kept: %1', (error as Error).message),
              { autoClose: 6000 }
            )
          )
    );
    const undo = button(
      trans.__('Undo'),
      trans.__('Put back what this cell was before the agent'),
      () =>
        model.undoCell(path, cellId).catch(error =>
          Notification.error(
            trans.__('This cell was not undone: %1', (error as Error).message),
            {
              autoClose: 6000
            }
          )
        )
    );
    this.node.append(label, keep, undo);
  }
}

function button(
  text: string,
  title: string,
  onClick: () => unknown
): HTMLButtonElement {
  const element = document.createElement('button');
  element.type = 'button';
  element.className = 'jp-mod-styled jp-hdsp-ReviewBadge-button';
  element.textContent = text;
  element.title = title;
  element.addEventListener('click', event => {
    event.stopPropagation(); // a click on the badge must not select or edit the cell
    void onClick();
  });
  return element;
}

function badgeOf(cell: Cell): ReviewBadge | undefined {
  return (cell.layout as PanelLayout).widgets.find(
    (widget): widget is ReviewBadge => widget instanceof ReviewBadge
  );
}

/**
 * Keep the marks of every open notebook in step with the model's review state.
 */
export function showReviewMarks(
  model: AgentModel,
  notebooks: INotebookTracker,
  trans: TranslationBundle
): void {
  const sync = (panel: NotebookPanel) => {
    const path = localPath(panel.context.path);
    for (const cell of panel.content.widgets) {
      const mark = model.review.find(path, cell.model.id);
      const badge = badgeOf(cell);
      if (mark && !badge) {
        cell.addClass(MARKED);
        (cell.layout as PanelLayout).insertWidget(
          0,
          new ReviewBadge(path, cell.model.id, mark.kind, model, trans)
        );
      } else if (!mark && badge) {
        cell.removeClass(MARKED);
        badge.dispose();
      }
    }
  };
  const syncAll = () => notebooks.forEach(sync);
  model.review.changed.connect(syncAll);
  notebooks.widgetAdded.connect((_, panel) => {
    // Cells the agent inserts arrive after its tool result: mark them when they appear.
    panel.content.model?.cells.changed.connect(() =>
      requestAnimationFrame(() => sync(panel))
    );
    void panel.context.ready.then(() => sync(panel));
  });
  notebooks.forEach(panel =>
    panel.content.model?.cells.changed.connect(() =>
      requestAnimationFrame(() => sync(panel))
    )
  );
}
