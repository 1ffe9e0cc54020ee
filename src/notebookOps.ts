import type { ISharedCell, ISharedNotebook } from '@jupyter/ydoc';
import type { ICodeCellModel } from '@jupyterlab/cells';
import type * as nbformat from '@jupyterlab/nbformat';
import type { INotebookModel } from '@jupyterlab/notebook';
import { JSONExt } from '@lumino/coreutils';

/**
 * The notebook edits the server's tools send (hdsp_agent/documents/edits.py), applied to the
 * notebook model JupyterLab renders. Cells change through the shared model (with real-time
 * collaboration, what every collaborator shares); outputs through the cell's output area model, the
 * path JupyterLab's own executions take. Edits address cells by id because indices shift while the
 * user works.
 */
export type NotebookEdit =
  | { op: 'insert_cell'; index: number; cell: nbformat.ICell }
  | { op: 'set_cell_source'; cell_id: string; source: string }
  | { op: 'delete_cell'; cell_id: string }
  | { op: 'move_cell'; cell_id: string; to_index: number }
  | {
      op: 'set_cell_outputs';
      cell_id: string;
      outputs: nbformat.IOutput[];
      execution_count: number | null;
      running?: boolean;
    };

/**
 * An error the server turns into the tool's error code (the same codes as its file mode).
 */
export class NotebookEditError extends Error {
  constructor(
    readonly code: string,
    message: string
  ) {
    super(message);
  }
}

/**
 * Apply one edit; throws `NotebookEditError` when the cell it names is gone.
 */
export function applyEdit(model: INotebookModel, edit: NotebookEdit): void {
  const notebook = model.sharedModel;
  switch (edit.op) {
    case 'insert_cell': {
      const position = clampedPosition(edit.index, notebook.cells.length);
      notebook.insertCell(position, toSharedCell(edit.cell));
      return;
    }
    case 'set_cell_source': {
      setSourceMinimally(findCell(notebook, edit.cell_id)[1], edit.source);
      return;
    }
    case 'delete_cell': {
      notebook.deleteCell(findCell(notebook, edit.cell_id)[0]);
      return;
    }
    case 'move_cell': {
      const [from] = findCell(notebook, edit.cell_id);
      const to = clampedPosition(edit.to_index, notebook.cells.length - 1);
      if (from !== to) {
        notebook.moveCell(from, to);
      }
      return;
    }
    case 'set_cell_outputs': {
      const [index, cell] = findCell(notebook, edit.cell_id);
      if (cell.cell_type !== 'code') {
        throw new NotebookEditError(
          'E_NOT_A_CODE_CELL',
          `cell ${edit.cell_id} is a ${cell.cell_type} cell, not code`
        );
      }
      const code = model.cells.get(index) as ICodeCellModel;
      setOutputs(code, edit.outputs);
      code.executionCount = edit.execution_count;
      // The prompt shows [*] while the agent's run is going, as for the user's own runs.
      code.executionState = edit.running ? 'running' : 'idle';
      return;
    }
  }
  throw new NotebookEditError(
    'E_NOTEBOOK_BRIDGE',
    `unknown notebook edit ${(edit as { op?: string }).op}`
  );
}

/**
 * Make the cell's outputs `outputs`, touching only those that changed: a running cell's outputs grow
 * at the end, so each update replaces the last one or two instead of redrawing everything.
 */
function setOutputs(cell: ICodeCellModel, outputs: nbformat.IOutput[]): void {
  const area = cell.outputs;
  const current = area.toJSON();
  if (current.length > outputs.length) {
    area.fromJSON(outputs);
    return;
  }
  current.forEach((output, index) => {
    if (!JSONExt.deepEqual(output as any, outputs[index] as any)) {
      area.set(index, outputs[index]);
    }
  });
  // add() merges a stream into a preceding one of the same name: the server's outputs are merged
  // the same way, so the count stays in step.
  outputs.slice(current.length).forEach(output => area.add(output));
}

function findCell(
  notebook: ISharedNotebook,
  cellId: string
): [number, ISharedCell] {
  const index = notebook.cells.findIndex(cell => cell.getId() === cellId);
  if (index < 0) {
    throw new NotebookEditError(
      'E_CELL_NOT_FOUND',
      `no cell with id '${cellId}' (${notebook.cells.length} cells)`
    );
  }
  return [index, notebook.cells[index]];
}

/**
 * Python-style insertion position, as the server's file mode computes it: negative counts from the
 * end, out of range goes to the nearest end.
 */
function clampedPosition(index: number, count: number): number {
  const position = index < 0 ? index + count + 1 : index;
  return Math.max(0, Math.min(position, count));
}

/**
 * Replace only the part of the source that differs, so a cursor or selection the user has elsewhere
 * in the cell (or the file's editor) stays where it is.
 */
export function setSourceMinimally(
  cell: Pick<ISharedCell, 'getSource' | 'updateSource'>,
  source: string
): void {
  const old = cell.getSource();
  if (old === source) {
    return;
  }
  let start = 0;
  const shorter = Math.min(old.length, source.length);
  while (start < shorter && old[start] === source[start]) {
    start++;
  }
  let end = 0;
  while (
    end < shorter - start &&
    old[old.length - 1 - end] === source[source.length - 1 - end]
  ) {
    end++;
  }
  cell.updateSource(
    start,
    old.length - end,
    source.slice(start, source.length - end)
  );
}

function toSharedCell(
  cell: nbformat.ICell
): Parameters<ISharedNotebook['insertCell']>[1] {
  const source = Array.isArray(cell.source)
    ? cell.source.join('')
    : String(cell.source ?? '');
  const shared: Record<string, unknown> = {
    id: cell.id,
    cell_type: cell.cell_type,
    source,
    metadata: cell.metadata ?? {}
  };
  if (cell.cell_type === 'code') {
    shared.outputs = (cell as nbformat.ICodeCell).outputs ?? [];
    shared.execution_count =
      (cell as nbformat.ICodeCell).execution_count ?? null;
  }
  return shared as unknown as Parameters<ISharedNotebook['insertCell']>[1];
}
