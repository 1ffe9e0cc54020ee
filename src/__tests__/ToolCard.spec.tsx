import { nullTranslator } from '@jupyterlab/translation';
import { act, fireEvent, render, screen } from '@testing-library/react';
import * as React from 'react';

import { ToolCard, summarize } from '../components/ToolCard';
import { IToolCallState } from '../conversation';
import { ToolStatus } from '../tokens';

const trans = nullTranslator.load('hdsp_agent');

function call(fields: Partial<IToolCallState> = {}): IToolCallState {
  return {
    callId: 'c1',
    name: 'edit_existing_file',
    status: 'done',
    rawArguments: '{"filepath": "src/app.py"}',
    arguments: { filepath: 'src/app.py' },
    content: 'Edited src/app.py',
    error: null,
    details: null,
    progress: null,
    approval: null,
    resolution: null,
    startedAt: 100,
    finishedAt: 102.5,
    ...fields
  };
}

function card(state: IToolCallState, showDetails = false) {
  return render(
    <ToolCard call={state} trans={trans} showDetails={showDetails} />
  );
}

describe('ToolCard', () => {
  it.each<[ToolStatus, string, boolean]>([
    ['generating', 'Preparing…', true],
    ['generated', 'Ready', true],
    ['awaiting_approval', 'Waiting for you', false],
    ['calling', 'Running…', true],
    ['done', 'Done', false],
    ['errored', 'Failed', false],
    ['denied', 'Denied', false],
    ['canceled', 'Stopped', false]
  ])('shows %s as "%s" (spinner: %s)', (status, label, spinner) => {
    const { container } = card(
      call({ status, finishedAt: null, startedAt: null })
    );

    expect(screen.getByText(label)).toBeTruthy();
    expect(
      container.querySelector('.jp-hdsp-ToolCard')?.getAttribute('data-status')
    ).toBe(status);
    expect(!!container.querySelector('.jp-hdsp-Spinner')).toBe(spinner);
  });

  it.each<[string, Partial<IToolCallState>, string, string]>([
    [
      'a cell that raised',
      {
        name: 'run_cell',
        content:
          'Cell c1 raised an error, execution count 3 (0.1 s).\n--- output ---\nZeroDivisionError: division by zero',
        details: { status: 'error', cell_id: 'c1' }
      },
      'error',
      'Raised an error'
    ],
    [
      'an interrupted cell',
      {
        name: 'run_cell',
        content:
          'Cell c1 raised an error (2.0 s).\n--- output ---\nKeyboardInterrupt: \nTraceback ...',
        details: { status: 'error' }
      },
      'interrupted',
      'Interrupted'
    ],
    [
      'a cell not run after an earlier error',
      { name: 'run_cell', details: { status: 'aborted' } },
      'not-run',
      'Not run (an earlier cell failed)'
    ],
    [
      'a cell still running when the tool stopped waiting',
      { name: 'run_cell', details: { status: 'running' } },
      'still-running',
      'Still running in the kernel'
    ],
    [
      'a cell waiting for a busy kernel',
      { name: 'execute_code', details: { status: 'queued' } },
      'still-running',
      'Waiting for the kernel'
    ],
    [
      'a tool over its time limit',
      {
        status: 'errored',
        error: { code: 'E_TOOL_TIMEOUT', message: 'took too long' }
      },
      'timed-out',
      'Timed out'
    ],
    [
      'a cell that finished',
      { name: 'run_cell', details: { status: 'ok' } },
      'ok',
      'Done'
    ]
  ])('shows %s honestly', (_name, fields, outcome, label) => {
    const { container } = card(call(fields));
    const root = container.querySelector('.jp-hdsp-ToolCard')!;
    expect(root.getAttribute('data-outcome')).toBe(outcome);
    expect(
      container.querySelector('.jp-hdsp-ToolCard-status')?.textContent
    ).toBe(label);
    if (outcome !== 'ok') {
      expect(root.classList.contains('jp-mod-outcome-ok')).toBe(false);
      expect(screen.queryByText('Done')).toBeNull();
    }
  });

  it('says in words what the call did, and how long it took; the tool name is in the details', () => {
    const { container } = card(call());
    expect(screen.getByText('Change app.py')).toBeTruthy();
    expect(screen.getByText('2.5 s')).toBeTruthy();
    expect(screen.queryByText('edit_existing_file')).toBeNull();

    fireEvent.click(container.querySelector('.jp-hdsp-ToolCard-header')!);

    expect(screen.getByText('edit_existing_file')).toBeTruthy();
    expect(
      container.querySelector('.jp-hdsp-ToolCard-body')?.textContent
    ).toContain('src/app.py');
  });

  it('names a deleted or moved cell by number and first line; ids and raw JSON stay behind "Details"', () => {
    for (const [name, headline] of [
      ['delete_cell', 'Delete a cell of analysis.ipynb'],
      ['move_cell', 'Move a cell in analysis.ipynb']
    ]) {
      const { container, unmount } = card(
        call({
          name,
          arguments: {
            path: 'analysis.ipynb',
            cell_id: 'aec4de07',
            to_index: null
          },
          rawArguments: null,
          content: 'Deleted code cell aec4de07 (was at index 3).',
          details: {
            path: 'analysis.ipynb',
            cell_id: 'aec4de07',
            index: 3,
            first_line: 'df.head()'
          }
        })
      );
      fireEvent.click(container.querySelector('.jp-hdsp-ToolCard-header')!);
      const root = container.querySelector('.jp-hdsp-ToolCard')!;
      const details = root.querySelector('.jp-hdsp-ToolCard-details')!;
      expect(details.hasAttribute('open')).toBe(false);
      // What shows without opening "Details": the card as a person reads it.
      const shown = root.cloneNode(true) as Element;
      for (const hidden of Array.from(
        shown.querySelectorAll('.jp-hdsp-ToolCard-details > :not(summary)')
      )) {
        hidden.remove();
      }
      expect(shown.textContent).toContain(headline);
      expect(shown.textContent).toContain('cell 4 (df.head())');
      expect(shown.textContent).not.toMatch(
        /aec4de07|null|delete_cell|move_cell/
      );
      expect(details.textContent).toContain('aec4de07');
      expect(details.textContent).toContain('null');
      unmount();
    }
  });

  it.each<[string, Record<string, unknown>, string]>([
    [
      'insert_cell',
      { path: 'work/errors.ipynb', source: 'x' },
      'Insert a cell into errors.ipynb'
    ],
    ['run_cell', { code: 'print(1)' }, 'Run a cell in the notebook'],
    ['read_file', { filepath: 'data/iris.csv' }, 'Read iris.csv'],
    ['run_terminal_command', { command: 'ls -la' }, 'Run a command']
  ])('headlines %s in words', (name, args, words) => {
    card(call({ name, arguments: args }));
    expect(screen.getByText(words)).toBeTruthy();
  });

  it('keeps the name of a tool it has no words for (an MCP tool)', () => {
    card(call({ name: 'demo__echo', arguments: { text: 'hi' } }));
    expect(screen.getByText('demo__echo')).toBeTruthy();
  });

  it('ticks the elapsed time while running, preferring the tool progress', () => {
    jest.useFakeTimers();
    jest.setSystemTime(110_000);
    const { rerender } = card(
      call({ status: 'calling', startedAt: 105, finishedAt: null })
    );
    expect(screen.getByText('5.0 s')).toBeTruthy();
    act(() => {
      jest.advanceTimersByTime(2000);
    });
    expect(screen.getByText('7.0 s')).toBeTruthy();

    rerender(
      <ToolCard
        call={call({
          status: 'calling',
          startedAt: 105,
          finishedAt: null,
          progress: { message: 'epoch 3/10', elapsed: 42 }
        })}
        trans={trans}
        showDetails={false}
      />
    );
    expect(screen.getByText('42 s')).toBeTruthy();
    expect(screen.getByText('epoch 3/10')).toBeTruthy();
    jest.useRealTimers();
  });

  it('folds the arguments and result away until opened', () => {
    card(call());
    const header = screen.getByRole('button', { expanded: false });
    expect(screen.queryByText('Edited src/app.py')).toBeNull();

    fireEvent.click(header);

    expect(header.getAttribute('aria-expanded')).toBe('true');
    expect(screen.getByText('Edited src/app.py')).toBeTruthy();
    expect(screen.getByText(/"filepath": "src\/app.py"/)).toBeTruthy();
  });

  it('opens the details from the start when the preference says so', () => {
    card(call(), true);
    expect(screen.getByText('Edited src/app.py')).toBeTruthy();
  });

  it('colors the diff of an edit line by line', () => {
    const diff =
      '--- a/src/app.py\n+++ b/src/app.py\n@@ -1,2 +1,2 @@\n x = 1\n-y = 2\n+y = 3\n';
    const { container } = card(call({ details: { diff } }));

    const lines = [...container.querySelectorAll('.jp-hdsp-Diff-line')].map(
      line => [
        line.className.replace('jp-hdsp-Diff-line jp-hdsp-Diff-', ''),
        line.textContent
      ]
    );
    expect(lines).toEqual([
      ['file', '--- a/src/app.py'],
      ['file', '+++ b/src/app.py'],
      ['hunk', '@@ -1,2 +1,2 @@'],
      ['context', ' x = 1'],
      ['remove', '-y = 2'],
      ['add', '+y = 3']
    ]);
  });

  it('shows the images of cell outputs', () => {
    card(
      call({
        name: 'run_cell',
        details: {
          images: [{ mime_type: 'image/png', data: 'iVBORw0KGgo=' }]
        }
      })
    );
    const image = screen.getByRole('img') as HTMLImageElement;
    expect(image.src).toBe('data:image/png;base64,iVBORw0KGgo=');
  });

  it('shows a picture read_file read, and skips images without data', () => {
    card(
      call({
        name: 'read_file',
        details: {
          image: { mime_type: 'image/png', base64: 'iVBORw0KGgo=' },
          images: [{ mime_type: 'image/png' } as any]
        }
      })
    );
    const [image] = screen.getAllByRole('img') as HTMLImageElement[];
    expect(screen.getAllByRole('img')).toHaveLength(1);
    expect(image.src).toBe('data:image/png;base64,iVBORw0KGgo=');
  });

  it('highlights an error with its suggestion', () => {
    const { container } = card(
      call({
        status: 'errored',
        error: {
          code: 'E_FILE_NOT_FOUND',
          message: 'src/ap.py does not exist',
          suggestion: 'Did you mean src/app.py?'
        }
      })
    );
    const error = container.querySelector('.jp-hdsp-ToolCard-error');
    // The message is the headline; the code is kept for the details.
    expect(error?.textContent).not.toContain('E_FILE_NOT_FOUND');
    expect(error?.textContent).toContain('src/ap.py does not exist');
    expect(error?.textContent).toContain('Did you mean src/app.py?');

    fireEvent.click(container.querySelector('.jp-hdsp-ToolCard-header')!);
    expect(
      container.querySelector('.jp-hdsp-ToolCard-errorCode')?.textContent
    ).toContain('error code E_FILE_NOT_FOUND');
  });

  it("shows a denial with the user's reason", () => {
    card(
      call({
        status: 'denied',
        resolution: { approved: false, scope: 'once', reason: 'not on main' },
        error: {
          code: 'E_DENIED',
          message: 'the user declined this call. Reason: not on main'
        }
      })
    );
    expect(screen.getByText('Denied: not on main')).toBeTruthy();
  });

  it('shows a policy denial with the server message', () => {
    card(
      call({
        status: 'denied',
        error: { code: 'E_DENIED', message: 'not allowed: destructive command' }
      })
    );
    expect(screen.getByText('not allowed: destructive command')).toBeTruthy();
  });
});

describe('summarize', () => {
  it('picks the argument that says what the call is about', () => {
    expect(summarize({ arguments: { command: 'git status\nls' } })).toBe(
      'git status'
    );
    expect(summarize({ arguments: { code: 'x'.repeat(80) } })).toHaveLength(58);
    expect(summarize({ arguments: { timeout: 3 } })).toBe('');
    expect(summarize({ arguments: null })).toBe('');
  });
});

describe("ToolCard and the server's words", () => {
  it("shows the server's error and suggestion in the user's language", () => {
    // A bundle that answers every catalog template in "Korean" (marked), as JupyterLab's would.
    const korean = {
      __: (msgid: string, ...args: any[]) =>
        `KO[${msgid.replace(/%(\d+)/g, (_, n) => String(args[Number(n) - 1]))}]`
    } as any;
    const reason = 'blocked by policy';
    const message = `not allowed: ${reason}`;
    const suggestion =
      'Do not retry this call; choose another approach or ask the user.';
    render(
      <ToolCard
        call={call({
          status: 'errored',
          error: { code: 'E_TOOL_DENIED', message, suggestion },
          texts: {
            [message]: { id: 'not allowed: %1', params: [reason] },
            [reason]: { id: reason, params: [] },
            [suggestion]: { id: suggestion, params: [] }
          }
        })}
        trans={korean}
        showDetails={false}
      />
    );
    expect(
      document.querySelector('.jp-hdsp-ToolCard-error')?.firstChild?.textContent
    ).toBe('KO[not allowed: KO[blocked by policy]]');
    expect(
      document.querySelector('.jp-hdsp-ToolCard-suggestion')?.textContent
    ).toBe(`KO[${suggestion}]`);
  });
});
