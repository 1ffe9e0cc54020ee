import type * as nbformat from '@jupyterlab/nbformat';

import type { NotebookEdit } from './notebookOps';

/**
 * The NotebookBridge's messages, both directions: the TypeScript mirror of
 * hdsp_agent/documents/bridge_wire.py, checked against contracts/wire.json by
 * src/__tests__/wireSchema.spec.ts.
 */

interface IRequestBase {
  type: 'request';
  /** null: a progress push (a running cell's outputs so far) that nobody waits for. */
  id: number | null;
  path: string;
}

/** Where a brief `read` says what it left out of an output (bridge_wire.OMITTED_KEY). */
export const OMITTED_KEY = 'hdsp_agent_omitted';
/** What follows a text a brief `read` cut (bridge_wire.OMITTED_TEXT_MARK). */
export const OMITTED_TEXT_MARK = '\n[… not read: ';

export type BridgeRequest =
  /**
   * `output_chars` null: the whole notebook; a number: outputs without their large payloads (see
   * bridge_wire.ReadRequest).
   */
  | (IRequestBase & {
      method: 'read';
      output_chars?: number | null;
      /** A brief read's cells whose outputs are sent (the others': none); null: all. */
      outputs_start?: number | null;
      outputs_stop?: number | null;
    })
  | (IRequestBase & {
      method: 'read_cell';
      cell_id?: string | null;
      /** Negative: from the end. */
      index?: number | null;
    })
  | (IRequestBase & {
      method: 'apply';
      edit: NotebookEdit;
      /**
       * The version the edit was computed from (a `read_cell`'s): refused with
       * E_NOTEBOOK_CHANGED when the notebook changed since. null: no check.
       */
      base_version?: number | null;
    })
  | (IRequestBase & { method: 'snapshot' })
  | (IRequestBase & { method: 'restore'; notebook: nbformat.INotebookContent })
  | (IRequestBase & { method: 'save' })
  | (IRequestBase & { method: 'read_text' })
  | (IRequestBase & { method: 'set_text'; expected: string; text: string })
  | (IRequestBase & { method: 'revert_text'; expected: string });

/**
 * Every notebook and text-file editor the tab has open; `loaded`: those announced for the first time
 * (just loaded from the file: the server replays the agent's unsaved changes into them).
 */
export interface IOpenAnnouncement {
  type: 'open';
  paths: string[];
  editors: string[];
  loaded: string[];
}

export interface IBridgeError {
  code: string;
  message: string;
}

export interface IBridgeResponse {
  type: 'response';
  id: number | null;
  result?: Record<string, unknown> | null;
  error?: IBridgeError | null;
}

export type TabMessage = IOpenAnnouncement | IBridgeResponse;

/** The answer to `read` and `snapshot`. */
export interface INotebookResult {
  notebook: nbformat.INotebookContent;
  /** A brief read: how many characters of output it left out. */
  omitted_chars?: number;
}

/**
 * The answer to `read_cell`: one cell at `index` of `cell_count`, the notebook's kernelspec and
 * language, and the model's version now. O(cell), whatever the notebook's size.
 */
export interface ICellResult {
  version: number;
  index: number;
  cell_count: number;
  cell: nbformat.ICell;
  kernelspec?: Record<string, unknown>;
  language?: string | null;
}

/**
 * The answer to `apply`: the cell the edit touched after (`cell` at `index`, null when deleted) and
 * before (`prior_cell` at `prior_index`, null when inserted), and the model's version after. Never
 * the whole notebook: an edit costs O(cell) on the wire.
 */
export interface IAppliedDelta {
  version: number;
  index?: number | null;
  cell?: nbformat.ICell | null;
  prior_index?: number | null;
  prior_cell?: nbformat.ICell | null;
}

/** The answer to `read_text`. */
export interface ITextResult {
  text: string;
  dirty: boolean;
}

/** The answer to `revert_text`. */
export interface IRevertResult {
  reverted: boolean;
}
