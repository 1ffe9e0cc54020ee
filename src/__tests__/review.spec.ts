import { ReviewState } from '../review';

const envelope = { seq: 1, ts: 0, session_id: 's' };

function done(name: string, path: string, cellId: string): any {
  return {
    ...envelope,
    type: 'tool.status',
    call_id: `${name}-${cellId}`,
    name,
    status: 'done',
    details: { path, cell_id: cellId, index: 0 }
  };
}

describe('ReviewState', () => {
  function start(turnId: string): any {
    return { ...envelope, type: 'turn.start', turn_id: turnId, model: 'm' };
  }

  it('marks each cell the turn inserted or edited once, and nothing else', () => {
    const review = new ReviewState();
    review.apply(start('t1'));
    review.apply(done('insert_cell', 'nb.ipynb', 'a'));
    review.apply(done('edit_cell', 'nb.ipynb', 'b'));
    review.apply(done('edit_cell', 'nb.ipynb', 'a'));
    review.apply(done('read_notebook', 'nb.ipynb', 'c'));
    review.apply({ ...done('edit_cell', 'nb.ipynb', 'd'), status: 'errored' });
    expect(review.marks).toEqual([
      { path: 'nb.ipynb', cellId: 'a', kind: 'inserted', turnId: 't1' },
      { path: 'nb.ipynb', cellId: 'b', kind: 'edited', turnId: 't1' }
    ]);
  });

  it('does not mark a cell the agent only ran', () => {
    const review = new ReviewState();
    review.apply({
      ...done('run_cell', 'nb.ipynb', 'mine'),
      raw_arguments: '{"path": "nb.ipynb", "cell_id": "mine"}'
    });
    review.apply({
      ...done('run_cell', 'nb.ipynb', 'new'),
      arguments: { code: 'x' }
    });
    expect(review.marks.map(mark => mark.cellId)).toEqual(['new']);
  });

  it('keeps the marks across the next message until kept or undone, also from the event log', () => {
    const review = new ReviewState();
    const changes: number[] = [];
    review.changed.connect(() => changes.push(review.marks.length));
    review.apply(start('t1'));
    review.apply(done('insert_cell', 'nb.ipynb', 'a'));
    review.apply(done('insert_cell', 'nb.ipynb', 'b'));
    review.apply(start('t2'));
    review.apply(done('insert_cell', 'nb.ipynb', 'c'));
    expect(review.marks.map(mark => mark.cellId)).toEqual(['a', 'b', 'c']);
    // A Keep (or a cell's Undo), as the server logs it: a replayed log forgets the mark too.
    review.apply({
      ...envelope,
      type: 'cell.reviewed',
      path: 'nb.ipynb',
      cell_id: 'a',
      outcome: 'kept'
    } as any);
    expect(review.marks.map(mark => mark.cellId)).toEqual(['b', 'c']);
    // Undoing the second turn takes its marks only.
    review.apply({
      ...envelope,
      type: 'turn.undone',
      turn_id: 't2',
      turn_ids: ['t2'],
      restored: []
    } as any);
    expect(review.marks.map(mark => mark.cellId)).toEqual(['b']);
    expect(changes).toEqual([1, 2, 3, 2, 1]);
  });
});

describe('ReviewState for files', () => {
  function fileEdit(path: string, name = 'single_find_and_replace'): any {
    return {
      ...envelope,
      type: 'tool.status',
      call_id: `${name}-${path}`,
      name,
      status: 'done',
      details: { path, diff: '...', undo_id: 'undo-1', tool: name }
    };
  }

  it('marks each file the turn’s file tools changed, counting its changes', () => {
    const review = new ReviewState();
    review.apply(fileEdit('a.py'));
    review.apply(fileEdit('b.txt', 'create_new_file'));
    review.apply(fileEdit('a.py', 'multi_edit'));
    review.apply({ ...fileEdit('c.py'), status: 'errored' });
    review.apply({
      ...fileEdit('d.py'),
      name: 'read_file',
      details: { path: 'd.py' }
    });
    expect(review.files).toEqual([
      { path: 'a.py', version: 2 },
      { path: 'b.txt', version: 1 }
    ]);
    expect(review.marks).toEqual([]);
  });

  it('marks every file a shell command changed that has an undo record', () => {
    const review = new ReviewState();
    review.apply({
      ...envelope,
      type: 'tool.status',
      call_id: 'shell-1',
      name: 'run_terminal_command',
      status: 'done',
      details: {
        exit_code: 0,
        changed_files: [
          { path: 'out.txt', change: 'created', undo_id: 'undo-1' },
          { path: 'src/app.py', change: 'changed', undo_id: 'undo-2' },
          { path: 'big.bin', change: 'changed', undo_id: null }
        ]
      }
    });
    expect(review.files).toEqual([
      { path: 'out.txt', version: 1 },
      { path: 'src/app.py', version: 1 }
    ]);
  });

  it('remembers kept hunks per file until the file’s review ends or a turn starts', () => {
    const review = new ReviewState();
    review.apply(fileEdit('a.py'));
    review.apply(fileEdit('b.py'));
    review.keepHunk('a.py', 'k1');
    expect([...review.keptHunks('a.py')]).toEqual(['k1']);
    review.removeFile('a.py');
    expect(review.files.map(file => file.path)).toEqual(['b.py']);
    expect(review.keptHunks('a.py').size).toBe(0);
    review.apply({
      ...envelope,
      type: 'turn.start',
      turn_id: 't2',
      model: 'm'
    } as any);
    expect(review.files).toEqual([]);
  });
});

describe('ReviewState.reviewable', () => {
  const hunk = (start: number, text: string) => ({
    old_start: start,
    old_lines: [`old ${text}`],
    new_start: start,
    new_lines: [`new ${text}`]
  });
  const edited = (path: string): any => ({
    ...envelope,
    type: 'tool.status',
    call_id: 'c',
    name: 'multi_edit',
    status: 'done',
    details: { path, diff: '...', undo_id: 'undo-1' }
  });

  it('offers the agent’s hunks, not ones the user made or kept, until the agent changes the file again', () => {
    const review = new ReviewState();
    review.apply(edited('a.py'));
    const [a, b, mine] = [hunk(1, 'a'), hunk(5, 'b'), hunk(9, 'mine')];
    expect(review.reviewable('a.py', [a, b])).toEqual([a, b]);
    review.keepHunk('a.py', JSON.stringify([a.old_lines, a.new_lines]));
    // The user edited b since: the server reports it changed, and their own edit too.
    const bEdited = { ...b, new_lines: ['new b, edited'] };
    expect(review.reviewable('a.py', [a, bEdited, mine])).toEqual([]);
    review.apply(edited('a.py')); // the agent changes the file again: what it reports now is to review
    expect(review.reviewable('a.py', [a, bEdited, mine])).toEqual([
      bEdited,
      mine
    ]);
    expect(review.reviewable('other.py', [a])).toEqual([]);
  });
});
