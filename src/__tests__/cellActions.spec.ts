import { CodeCellModel } from '@jupyterlab/cells';

import {
  cellError,
  editPrompt,
  explainPrompt,
  fixPrompt
} from '../cellActions';

function codeCell(outputs: any[]): CodeCellModel {
  const cell = new CodeCellModel({});
  cell.sharedModel.setSource("scores['missing']");
  outputs.forEach(output => cell.outputs.add(output));
  return cell;
}

describe('cell actions', () => {
  it('finds the error output and strips its colours', () => {
    const cell = codeCell([
      { output_type: 'stream', name: 'stdout', text: 'before\n' },
      {
        output_type: 'error',
        ename: 'KeyError',
        evalue: "'missing'",
        traceback: [
          '\u001b[0;31mKeyError\u001b[0m Traceback',
          "----> 1 scores['missing']"
        ]
      }
    ]);
    expect(cellError(cell)).toEqual({
      ename: 'KeyError',
      evalue: "'missing'",
      traceback: "KeyError Traceback\n----> 1 scores['missing']"
    });
    expect(
      cellError(
        codeCell([{ output_type: 'stream', name: 'stdout', text: 'ok' }])
      )
    ).toBeNull();
  });

  it('puts the notebook, the cell and the traceback in the fix message', () => {
    const target = {
      path: 'errors.ipynb',
      index: 2,
      id: 'abc',
      source: "scores['missing']",
      error: {
        ename: 'KeyError',
        evalue: "'missing'",
        traceback: 'Traceback ...'
      }
    };
    const message = fixPrompt(target);
    expect(message).toContain(
      "cell 3 (id abc) of errors.ipynb: KeyError: 'missing'"
    );
    expect(message).toContain("```\nscores['missing']\n```");
    expect(message).toContain('Traceback ...');
    expect(explainPrompt(target)).toContain('Explain what cell 3');
    expect(editPrompt(target, 'use .get')).toContain(
      'Edit cell 3 (id abc) of errors.ipynb: use .get'
    );
  });

  it('cuts a huge traceback in the middle', () => {
    const long = Array.from({ length: 2000 }, (_, i) => `frame ${i}`);
    const cell = codeCell([
      { output_type: 'error', ename: 'E', evalue: 'v', traceback: long }
    ]);
    const { traceback } = cellError(cell)!;
    expect(traceback.length).toBeLessThan(6100);
    expect(traceback).toContain('frame 0');
    expect(traceback).toContain('frame 1999');
    expect(traceback).toContain('(cut)');
  });
});
