import { IWorkspace, loadWorkspace, tabWorkspaceStore } from '../workspace';

describe('loadWorkspace', () => {
  it('returns what the store holds', async () => {
    const saved: IWorkspace = {
      activeSessionId: 'x',
      model: 'm',
      mode: 'default'
    };
    await expect(
      loadWorkspace({ load: async () => saved, save: async () => undefined })
    ).resolves.toEqual(saved);
  });

  it('gives up on a store that never answers', async () => {
    const store = {
      load: () => new Promise<null>(() => undefined),
      save: async () => undefined
    };
    await expect(loadWorkspace(store, 10)).resolves.toBeNull();
  });

  it('treats a failing store as empty', async () => {
    const store = {
      load: () => Promise.reject(new Error('no workspace')),
      save: async () => undefined
    };
    await expect(loadWorkspace(store)).resolves.toBeNull();
    await expect(loadWorkspace(null)).resolves.toBeNull();
  });
});

describe('tabWorkspaceStore', () => {
  function memoryStorage(): Pick<Storage, 'getItem' | 'setItem'> & {
    items: Map<string, string>;
  } {
    const items = new Map<string, string>();
    return {
      items,
      getItem: key => items.get(key) ?? null,
      setItem: (key, value) => void items.set(key, value)
    };
  }

  it('after a reload, gives what this tab saved last, even if the workspace still holds an older value', async () => {
    const older: IWorkspace = {
      activeSessionId: 'older',
      model: '',
      mode: 'default'
    };
    const saves: IWorkspace[] = [];
    // JupyterLab's workspace: saves reach it later than the reload.
    const lagging = {
      load: async () => older,
      save: async (workspace: IWorkspace) => void saves.push(workspace)
    };
    const storage = memoryStorage();
    const newest: IWorkspace = {
      activeSessionId: 'newest',
      model: 'm',
      mode: 'default'
    };
    await tabWorkspaceStore(lagging, storage, 'k').save(newest);
    expect(saves).toEqual([newest]);

    const reloaded = tabWorkspaceStore(lagging, storage, 'k');
    await expect(reloaded.load()).resolves.toEqual(newest);
  });

  it('a new tab (nothing in its storage) starts from the workspace', async () => {
    const saved: IWorkspace = {
      activeSessionId: 'w',
      model: '',
      mode: 'default'
    };
    const store = tabWorkspaceStore(
      { load: async () => saved, save: async () => undefined },
      memoryStorage(),
      'k'
    );
    await expect(store.load()).resolves.toEqual(saved);
    await expect(
      tabWorkspaceStore(null, memoryStorage(), 'k').load()
    ).resolves.toBeNull();
  });
});
