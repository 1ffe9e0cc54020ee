import { IStateDB } from '@jupyterlab/statedb';

import { AgentMode } from './tokens';

/**
 * What the sidebar remembers across page reloads.
 */
export interface IWorkspace {
  activeSessionId: string | null;
  model: string;
  mode: AgentMode;
}

export interface IWorkspaceStore {
  load(): Promise<Partial<IWorkspace> | null>;
  save(workspace: IWorkspace): Promise<void>;
}

/**
 * Milliseconds to wait for the saved workspace before showing the most recent conversation.
 */
const LOAD_TIMEOUT = 2000;

/**
 * The saved workspace, or null when there is none or it does not come in time: JupyterLab's state
 * database answers only once the workspace is loaded, which may be late or never.
 */
export async function loadWorkspace(
  store: IWorkspaceStore | null,
  timeout = LOAD_TIMEOUT
): Promise<Partial<IWorkspace> | null> {
  if (!store) {
    return null;
  }
  let timer = 0;
  const late = new Promise<null>(resolve => {
    timer = window.setTimeout(() => resolve(null), timeout);
  });
  try {
    return await Promise.race([store.load(), late]);
  } catch {
    return null;
  } finally {
    window.clearTimeout(timer);
  }
}

/**
 * A workspace kept in JupyterLab's state database (saved with the JupyterLab workspace).
 */
export function stateDBWorkspaceStore(
  stateDB: IStateDB,
  key: string
): IWorkspaceStore {
  return {
    load: async () => {
      const saved = await stateDB.fetch(key);
      return (saved as Partial<IWorkspace> | undefined) ?? null;
    },
    save: async workspace => {
      await stateDB.save(key, { ...workspace });
    }
  };
}

/**
 * `inner`, with what this browser tab last saved also kept in `storage` (the tab's sessionStorage): it is
 * written at once and survives a reload of the tab, while JupyterLab writes its state database to the
 * workspace later (and a reload soon after a change finds the older value there). A new tab has no
 * session storage and starts from the workspace.
 */
export function tabWorkspaceStore(
  inner: IWorkspaceStore | null,
  storage: Pick<Storage, 'getItem' | 'setItem'>,
  key: string
): IWorkspaceStore {
  return {
    load: async () => {
      let kept: Partial<IWorkspace> | null = null;
      try {
        kept = JSON.parse(storage.getItem(key) ?? 'null');
      } catch {
        kept = null;
      }
      return kept ?? (inner ? await inner.load() : null);
    },
    save: async workspace => {
      try {
        storage.setItem(key, JSON.stringify(workspace));
      } catch {
        // Storage full or disabled: the workspace still has it.
      }
      await inner?.save(workspace);
    }
  };
}
