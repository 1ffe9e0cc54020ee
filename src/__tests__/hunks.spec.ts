import { hunkKey, hunkMarks, IHunk, locateHunks } from '../hunks';

const lines = (text: string) => text.split('\n');

const edit: IHunk = {
  old_start: 1,
  old_lines: ['b = 2'],
  new_start: 1,
  new_lines: ['b = 20', 'c = 30']
};
const deletion: IHunk = {
  old_start: 4,
  old_lines: ['gone = 1'],
  new_start: 4,
  new_lines: []
};

describe('locateHunks', () => {
  const doc = lines('a = 1\nb = 20\nc = 30\nd = 4\n');

  it('finds each hunk where the server says when its lines are there', () => {
    expect(locateHunks(doc, [edit, deletion])).toEqual([
      { hunk: edit, line: 1 },
      { hunk: deletion, line: 4 }
    ]);
  });

  it('follows a hunk the user moved by typing above it', () => {
    const moved = ['# note', '# more', ...doc];
    expect(locateHunks(moved, [edit])).toEqual([{ hunk: edit, line: 3 }]);
    const earlier = doc.slice(1); // the first line was deleted since
    expect(locateHunks(earlier, [edit])).toEqual([{ hunk: edit, line: 0 }]);
  });

  it('leaves out a hunk whose own lines the user edited', () => {
    const touched = lines('a = 1\nb = 21\nc = 30\nd = 4\n');
    expect(locateHunks(touched, [edit, deletion])).toEqual([
      { hunk: deletion, line: 4 }
    ]);
  });

  it('keeps a deletion at the end within the document', () => {
    const atEnd = { ...deletion, new_start: 99 };
    expect(locateHunks(['x'], [atEnd])).toEqual([{ hunk: atEnd, line: 1 }]);
  });
});

describe('hunkMarks', () => {
  it('marks the lines the agent wrote and puts the removed ones above them', () => {
    expect(hunkMarks({ hunk: edit, line: 3 })).toEqual({
      changedLines: [3, 4],
      barLine: 3,
      removed: ['b = 2']
    });
    expect(hunkMarks({ hunk: deletion, line: 4 })).toEqual({
      changedLines: [],
      barLine: 4,
      removed: ['gone = 1']
    });
  });
});

describe('hunkKey', () => {
  it('identifies a hunk by its lines, not where it is', () => {
    expect(hunkKey(edit)).toBe(hunkKey({ ...edit, new_start: 7 }));
    expect(hunkKey(edit)).not.toBe(hunkKey(deletion));
  });
});
