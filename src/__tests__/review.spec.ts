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
  it('marks each cell the turn inserted or edited once, and nothing else', () => {
    const review = new ReviewState();
    review.apply(done('insert_cell', 'nb.ipynb', 'a'));
    review.apply(done('edit_cell', 'nb.ipynb', 'b'));
    review.apply(done('edit_cell', 'nb.ipynb', 'a'));
    review.apply(done('read_notebook', 'nb.ipynb', 'c'));
    review.apply({ ...done('edit_cell', 'nb.ipynb', 'd'), status: 'errored' });
    expect(review.marks).toEqual([
      { path: 'nb.ipynb', cellId: 'a', kind: 'inserted' },
      { path: 'nb.ipynb', cellId: 'b', kind: 'edited' }
    ]);
  });

  it('forgets the marks when a new turn starts or the turn is undone, and one by one', () => {
    const review = new ReviewState();
    const changes: number[] = [];
    review.changed.connect(() => changes.push(review.marks.length));
    review.apply(done('insert_cell', 'nb.ipynb', 'a'));
    review.apply(done('insert_cell', 'nb.ipynb', 'b'));
    review.remove('nb.ipynb', 'a');
    expect(review.marks.map(mark => mark.cellId)).toEqual(['b']);
    review.apply({
      ...envelope,
      type: 'turn.undone',
      turn_id: 't',
      restored: []
    } as any);
    expect(review.marks).toEqual([]);
    review.apply(done('insert_cell', 'nb.ipynb', 'c'));
    review.apply({
      ...envelope,
      type: 'turn.start',
      turn_id: 't2',
      model: 'm'
    } as any);
    expect(review.marks).toEqual([]);
    expect(changes).toEqual([1, 2, 1, 0, 1, 0]);
  });
});
