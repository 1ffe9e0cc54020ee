import { IWorkspace, loadWorkspace } from '../workspace';

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
