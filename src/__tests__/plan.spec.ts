import { foldPlan } from '../plan';

const todo = (plan: unknown, status = 'done', name = 'todo'): any => ({
  seq: 1,
  ts: 0,
  session_id: 's',
  type: 'tool.status',
  call_id: 'c',
  name,
  status,
  details: { plan }
});

describe('foldPlan', () => {
  it('takes the whole latest list of a finished todo call, and ignores everything else', () => {
    const first = foldPlan(
      [],
      todo([{ text: 'Load data', status: 'in_progress' }, { text: 'Plot' }])
    );
    expect(first).toEqual([
      { text: 'Load data', status: 'in_progress' },
      { text: 'Plot', status: 'pending' }
    ]);
    expect(foldPlan(first, todo([{ text: 'x' }], 'errored'))).toBe(first);
    expect(foldPlan(first, todo([{ text: 'x' }], 'done', 'ls'))).toBe(first);
    expect(foldPlan(first, todo('not a list'))).toBe(first);
    expect(
      foldPlan(first, todo([{ text: 'Load data', status: 'done' }]))
    ).toEqual([{ text: 'Load data', status: 'done' }]);
  });
});
