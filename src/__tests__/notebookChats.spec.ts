import { NotebookChats, otherDocument } from '../notebookChats';
import { ISessionRecord } from '../tokens';

function record(id: string, notebooks: string[], updated = 1): ISessionRecord {
  return {
    id,
    title: id,
    created: 0,
    updated,
    model: '',
    status: 'idle',
    notebooks
  };
}

describe('NotebookChats: which chat goes with the notebook in view', () => {
  const first = record('first', ['work/first.ipynb'], 2);
  const older = record('older', ['work/first.ipynb'], 1);

  it('offers a new chat for a notebook the chat shown is not tied to, and keeps it when asked', () => {
    const chats = new NotebookChats();
    expect(chats.see('RTC:work/Untitled.ipynb')).toBe('work/Untitled.ipynb');
    const shown = { record: first, startedFor: null, running: false };
    expect(chats.decide(shown, [first])).toEqual({
      kind: 'offer',
      offer: { path: 'work/Untitled.ipynb', sessionId: null }
    });
    chats.setOffer({ path: 'work/Untitled.ipynb', sessionId: null });
    chats.keep('first');
    expect(chats.offer).toBeNull();
    expect(chats.decide(shown, [first])).toEqual({ kind: 'stay' });
  });

  it('reopens the most recent chat of the notebook, but never mid-turn', () => {
    const chats = new NotebookChats();
    chats.see('work/first.ipynb');
    const fresh = {
      record: null,
      startedFor: 'work/Untitled.ipynb',
      running: false
    };
    expect(chats.decide(fresh, [older, first])).toEqual({
      kind: 'reopen',
      sessionId: 'first'
    });
    const busy = {
      record: record('other', ['b.ipynb']),
      startedFor: null,
      running: true
    };
    expect(chats.decide(busy, [older, first])).toEqual({
      kind: 'offer',
      offer: { path: 'work/first.ipynb', sessionId: 'first' }
    });
  });

  it('lets a new chat started with no notebook take the next one; other files move nothing', () => {
    const chats = new NotebookChats();
    expect(chats.see('data.csv')).toBeNull();
    chats.see('work/first.ipynb');
    const fresh = { record: null, startedFor: null, running: false };
    expect(chats.decide(fresh, [first])).toEqual({ kind: 'stay' });
    expect(chats.newChatFor).toBe('work/first.ipynb');
    expect(chats.see('./work/first.ipynb')).toBeNull();
  });

  it('follows a rename: the chats of the old name learn the new one', () => {
    const chats = new NotebookChats();
    chats.see('work/Untitled.ipynb');
    const renamed = chats.renamed('work/Untitled.ipynb', 'work/sales.ipynb', [
      record('a', ['work/Untitled.ipynb']),
      record('b', ['other.ipynb'])
    ]);
    expect(renamed).toEqual([
      { id: 'a', notebooks: ['work/Untitled.ipynb', 'work/sales.ipynb'] }
    ]);
    expect(chats.see('work/sales.ipynb')).toBeNull();
  });
});

describe('otherDocument: a card names the document its call acts on when it is not in view', () => {
  const changes = (name: string) => name !== 'read_notebook';
  const call = (name: string, args: Record<string, unknown>, details = {}) => ({
    name,
    arguments: args,
    details,
    approval: null
  });

  it('names another notebook or file, not the one in view, nor a read', () => {
    expect(
      otherDocument(
        call('insert_cell', { path: 'work/other.ipynb' }),
        'work/view.ipynb',
        changes
      )
    ).toBe('work/other.ipynb');
    expect(
      otherDocument(
        call('insert_cell', { path: '/srv/root/work/view.ipynb' }),
        'work/view.ipynb',
        changes
      )
    ).toBeNull();
    expect(
      otherDocument(
        call('read_notebook', { path: 'work/other.ipynb' }),
        'work/view.ipynb',
        changes
      )
    ).toBeNull();
    // The server's resolved path wins over the model's argument.
    expect(
      otherDocument(
        call('insert_cell', {}, { path: 'work/view.ipynb' }),
        'work/view.ipynb',
        changes
      )
    ).toBeNull();
    expect(
      otherDocument(
        call('create_new_file', { filepath: 'notes.txt' }),
        'work/view.ipynb',
        changes
      )
    ).toBe('notes.txt');
  });
});
