import { render } from '@testing-library/react';
import * as React from 'react';

import { DiffView, diffRows } from '../components/DiffView';

describe('DiffView', () => {
  it('marks the changed part of a changed line, on both sides', () => {
    const { container } = render(
      <DiffView
        diff={
          '--- a/x.py\n+++ b/x.py\n@@ -1,2 +1,2 @@\n-threshold = compute(data, 0.5)\n+threshold = compute(data, 0.8)\n unchanged\n'
        }
      />
    );
    const marks = Array.from(container.querySelectorAll('mark')).map(mark => [
      mark.closest('.jp-hdsp-Diff-line')!.className,
      mark.textContent
    ]);
    expect(marks).toEqual([
      ['jp-hdsp-Diff-line jp-hdsp-Diff-remove', '5'],
      ['jp-hdsp-Diff-line jp-hdsp-Diff-add', '8']
    ]);
    // The lines read whole, sign included.
    expect(container.querySelector('.jp-hdsp-Diff-add')?.textContent).toBe(
      '+threshold = compute(data, 0.8)'
    );
  });

  it('pairs lines block by block and leaves unrelated lines unmarked', () => {
    const rows = diffRows(
      '@@ -1,3 +1,2 @@\n-a = 1\n-b = 2\n+a = 10\n+zzz\n-only removed\n'
    );
    // "-a = 1" / "+a = 10": the added "0"; "-b = 2" / "+zzz": nothing in common, unmarked.
    expect(rows.map(row => row.changed ?? null)).toEqual([
      null,
      [6, 6],
      null,
      [6, 7],
      null,
      null
    ]);
  });
});
