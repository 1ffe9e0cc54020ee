/**
 * `@` mentions in the composer: what can be mentioned (project files from the server, cells of the active
 * notebook, variables of its kernel) and where in the text a mention is being typed.
 */
import { IMention } from './tokens';

export interface IMentionSuggestion {
  label: string;
  detail: string;
  mention: IMention;
}

/**
 * The cells and kernel of the notebook the user is in (the app's notebook tracker provides it).
 */
export interface IMentionSource {
  cells(): { cell_id: string; index: number; source: string }[];
  variables(): Promise<IKernelName[]>;
}

/** A name in the kernel's user namespace; modules are offered only when their whole name is typed. */
export interface IKernelName {
  name: string;
  module: boolean;
}

const MAX_PER_KIND = 8;
// Identifiers only: completions of attributes, calls or magics are not variables.
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * The `@query` being typed just before the cursor, if any: its start offset and text.
 */
export function mentionAt(
  text: string,
  cursor: number
): { start: number; query: string } | null {
  const match = /(^|\s)@([^\s@]*)$/.exec(text.slice(0, cursor));
  if (!match) {
    return null;
  }
  return { start: cursor - match[2].length - 1, query: match[2] };
}

/**
 * The text with the `@query` at `start` replaced by the mention's label (and a space after it).
 */
export function insertMention(
  text: string,
  start: number,
  cursor: number,
  label: string
): { text: string; cursor: number } {
  const inserted = `@${label} `;
  return {
    text: text.slice(0, start) + inserted + text.slice(cursor),
    cursor: start + inserted.length
  };
}

export function cellSuggestions(
  cells: { cell_id: string; index: number; source: string }[],
  query: string
): IMentionSuggestion[] {
  const needle = query.toLowerCase();
  return cells
    .filter(
      cell =>
        `cell${cell.index + 1}`.startsWith(needle) ||
        cell.source.toLowerCase().includes(needle)
    )
    .slice(0, MAX_PER_KIND)
    .map(cell => ({
      label: `cell${cell.index + 1}`,
      detail: cell.source.split('\n')[0].slice(0, 60),
      mention: {
        kind: 'cell',
        cell_id: cell.cell_id,
        index: cell.index,
        source: cell.source
      }
    }));
}

/**
 * The user's variables whose names start with `query`: shortest first (`df` before `df_clean`), a module
 * (`pd`, `np`) only when `query` is its whole name — it is rarely what "@" is for.
 */
export function variableSuggestions(
  names: IKernelName[],
  query: string
): IMentionSuggestion[] {
  const seen = new Set<string>();
  return names
    .filter(({ name, module }) => {
      const fresh = !seen.has(name);
      seen.add(name);
      return (
        fresh &&
        IDENTIFIER.test(name) &&
        !name.startsWith('_') &&
        name.startsWith(query) &&
        (!module || name === query)
      );
    })
    .sort(
      (a, b) =>
        a.name.length - b.name.length ||
        (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)
    )
    .slice(0, MAX_PER_KIND)
    .map(({ name }) => ({
      label: name,
      detail: 'variable',
      mention: { kind: 'variable', name }
    }));
}

export function fileSuggestions(paths: string[]): IMentionSuggestion[] {
  return paths.slice(0, MAX_PER_KIND).map(path => ({
    label: path,
    detail: 'file',
    mention: { kind: 'file', path }
  }));
}
