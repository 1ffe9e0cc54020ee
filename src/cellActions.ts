/**
 * Asking the agent from where the problem is: "Fix with agent" on a cell whose output is an error, "Explain
 * with agent" and "Edit with agent" on any cell — in the cell's context menu and the command palette.
 *
 * Each starts a turn in the sidebar with the notebook, the cell and (for a fix) the traceback in the message,
 * so the model does not have to find them first.
 */
import { JupyterFrontEnd } from '@jupyterlab/application';
import { InputDialog } from '@jupyterlab/apputils';
import { ICellModel } from '@jupyterlab/cells';
import { INotebookTracker } from '@jupyterlab/notebook';
import { TranslationBundle } from '@jupyterlab/translation';

import { AgentModel } from './model';
import { CommandIDs, PANEL_ID } from './tokens';

// ANSI colour codes in tracebacks mean nothing to the model and cost tokens.
// eslint-disable-next-line no-control-regex -- matching the escape character is the point
const ANSI = /\u001b\[[0-9;]*[A-Za-z]/g;
// A traceback longer than this is cut in the middle: the first frames and the error line matter most.
const MAX_TRACEBACK_CHARS = 6000;

export interface ICellError {
  ename: string;
  evalue: string;
  traceback: string;
}

/**
 * The error output of a cell, if it has one (the last one when several).
 */
export function cellError(
  cell: ICellModel | null | undefined
): ICellError | null {
  if (!cell || cell.type !== 'code') {
    return null;
  }
  const outputs = (cell as any).outputs;
  let found: ICellError | null = null;
  for (let index = 0; index < (outputs?.length ?? 0); index++) {
    const output = outputs.get(index).toJSON();
    if (output.output_type === 'error') {
      const lines = Array.isArray(output.traceback) ? output.traceback : [];
      found = {
        ename: String(output.ename ?? ''),
        evalue: String(output.evalue ?? ''),
        traceback: cut(lines.join('\n').replace(ANSI, ''))
      };
    }
  }
  return found;
}

function cut(text: string): string {
  if (text.length <= MAX_TRACEBACK_CHARS) {
    return text;
  }
  const half = MAX_TRACEBACK_CHARS / 2;
  return `${text.slice(0, half)}\n… (cut) …\n${text.slice(-half)}`;
}

interface ICellTarget {
  path: string;
  index: number;
  id: string;
  source: string;
  error: ICellError | null;
}

function cellLabel(target: ICellTarget): string {
  return `cell ${target.index + 1} (id ${target.id}) of ${target.path}`;
}

function fence(text: string): string {
  const ticks = text.includes('```') ? '````' : '```';
  return `${ticks}\n${text}\n${ticks}`;
}

export function fixPrompt(target: ICellTarget): string {
  const error = target.error!;
  return [
    `Fix the error in ${cellLabel(target)}: ${error.ename}: ${error.evalue}`,
    `The cell:\n${fence(target.source)}`,
    `The traceback:\n${fence(error.traceback)}`,
    'Find the cause, change the cell (or what it depends on), and run it again to check.'
  ].join('\n\n');
}

export function explainPrompt(target: ICellTarget): string {
  return `Explain what ${cellLabel(target)} does, step by step, and anything surprising in it or its output.\n\n${fence(target.source)}`;
}

export function editPrompt(target: ICellTarget, instruction: string): string {
  return `Edit ${cellLabel(target)}: ${instruction}\n\nThe cell now:\n${fence(target.source)}`;
}

/**
 * Register the three commands and put them in the cell context menu ("Fix" only when the cell failed).
 */
export function addCellActions(
  app: JupyterFrontEnd,
  model: AgentModel,
  notebooks: INotebookTracker,
  trans: TranslationBundle
): void {
  const target = (): ICellTarget | null => {
    const panel = notebooks.currentWidget;
    const cell = notebooks.activeCell;
    if (!panel || !cell) {
      return null;
    }
    return {
      path: panel.context.path,
      index: panel.content.activeCellIndex,
      id: cell.model.id,
      source: cell.model.sharedModel.getSource(),
      error: cellError(cell.model)
    };
  };
  const ask = async (prompt: string) => {
    app.shell.activateById(PANEL_ID);
    await model.send(prompt);
  };

  const noArgs = { args: { type: 'object', properties: {} } };
  app.commands.addCommand(CommandIDs.fixError, {
    describedBy: noArgs,
    label: trans.__('Fix with agent'),
    caption: trans.__('Ask the agent to fix the error this cell raised'),
    isVisible: () => !!target()?.error,
    isEnabled: () => !!target()?.error,
    execute: async () => {
      const cell = target();
      if (cell?.error) {
        await ask(fixPrompt(cell));
      }
    }
  });
  app.commands.addCommand(CommandIDs.explainCell, {
    describedBy: noArgs,
    label: trans.__('Explain with agent'),
    isEnabled: () => !!target(),
    execute: async () => {
      const cell = target();
      if (cell) {
        await ask(explainPrompt(cell));
      }
    }
  });
  app.commands.addCommand(CommandIDs.editCell, {
    describedBy: noArgs,
    label: trans.__('Edit with agent…'),
    isEnabled: () => !!target(),
    execute: async () => {
      const cell = target();
      if (!cell) {
        return;
      }
      const answer = await InputDialog.getText({
        title: trans.__('Edit cell %1 with the agent', cell.index + 1),
        label: trans.__('What should change?'),
        placeholder: trans.__('e.g. plot it as a bar chart sorted by count')
      });
      const instruction = answer.button.accept ? answer.value?.trim() : '';
      if (instruction) {
        await ask(editPrompt(cell, instruction));
      }
    }
  });

  const selector = '.jp-Notebook .jp-Cell';
  [CommandIDs.fixError, CommandIDs.explainCell, CommandIDs.editCell].forEach(
    (command, rank) => {
      app.contextMenu.addItem({ command, selector, rank: 20 + rank });
    }
  );
}
