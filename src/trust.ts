/**
 * "Can I trust this result?" in the notebook: a toolbar button (and palette command) that asks the agent to
 * replay the notebook in a fresh kernel (check_reproducibility, approved like running cells), and the command
 * a replay finding uses to show its cell.
 */
import { JupyterFrontEnd } from '@jupyterlab/application';
import { ToolbarButton } from '@jupyterlab/apputils';
import { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';
import { TranslationBundle } from '@jupyterlab/translation';
import { ReadonlyPartialJSONObject } from '@lumino/coreutils';

import { AgentModel } from './model';
import { CommandIDs, PANEL_ID } from './tokens';

export function replayPrompt(path: string): string {
  return (
    `Check whether ${path} reproduces from a clean start: call check_reproducibility with path ` +
    `"${path}", then tell me which cells differ and why, in a few lines.`
  );
}

export function addTrustActions(
  app: JupyterFrontEnd,
  model: AgentModel,
  notebooks: INotebookTracker,
  trans: TranslationBundle
): void {
  const pathArgs = {
    args: {
      type: 'object',
      properties: {
        path: {
          type: 'string',
          description: 'The notebook (default: the active one)'
        },
        index: { type: 'number', description: 'The cell index' }
      }
    }
  };
  app.commands.addCommand(CommandIDs.checkReproducibility, {
    label: trans.__('Check reproducibility'),
    caption: trans.__(
      'Replay the notebook in a fresh kernel and compare each cell with its saved outputs'
    ),
    describedBy: pathArgs,
    isEnabled: () => !!notebooks.currentWidget,
    execute: async (args: ReadonlyPartialJSONObject) => {
      const path = String(
        args.path ?? notebooks.currentWidget?.context.path ?? ''
      );
      if (!path) {
        return;
      }
      app.shell.activateById(PANEL_ID);
      if (model.activeSession?.conversation.running) {
        // The open chat is busy with another task: the replay is a task of its own, in a new chat,
        // rather than a refusal ("a turn is already running") or a message slipped into that turn.
        model.newChat();
      }
      await model.send(replayPrompt(path));
    }
  });
  app.commands.addCommand(CommandIDs.revealCell, {
    label: trans.__('Show the cell in the notebook'),
    describedBy: pathArgs,
    execute: async (args: ReadonlyPartialJSONObject) => {
      const path = String(args.path ?? '');
      const index = Number(args.index ?? 0);
      const widget = await app.commands.execute('docmanager:open', { path });
      const panel =
        widget instanceof NotebookPanel
          ? widget
          : notebooks.find(candidate => candidate.context.path === path);
      if (!panel) {
        return;
      }
      await panel.context.ready;
      const cell = panel.content.widgets[index];
      if (cell) {
        panel.content.activeCellIndex = index;
        await panel.content.scrollToCell(cell, 'center');
      }
    }
  });
  notebooks.widgetAdded.connect((_, panel) => {
    const button = new ToolbarButton({
      className: 'jp-hdsp-ReplayButton',
      label: trans.__('Reproducible?'),
      tooltip: trans.__(
        'Ask the agent to replay this notebook in a fresh kernel and compare each cell with its saved outputs'
      ),
      onClick: () =>
        void app.commands.execute(CommandIDs.checkReproducibility, {
          path: panel.context.path
        })
    });
    // Before the cell-type selector: a narrow toolbar moves its last items into "More commands" first.
    panel.toolbar.insertItem(9, 'hdspReplay', button);
  });
}
