import { NotebookModel } from '@jupyterlab/notebook';
import { Signal } from '@lumino/signaling';

import { localPath, NotebookBridge } from '../notebookBridge';
import { applyEdit } from '../notebookOps';
import { FakeSocket } from './fakeSocket';

/**
 * A real notebook model (the shared Yjs document JupyterLab renders) in a panel-shaped holder; the
 * tracker is the only stand-in, as the bridge needs nothing of it but lookup and its signal.
 */
function notebookWith(...sources: string[]): NotebookModel {
  const model = new NotebookModel();
  model.sharedModel.insertCells(
    0,
    sources.map((source, index) => ({
      cell_type: 'code',
      id: `c${index}`,
      source,
      metadata: {}
    }))
  );
  return model;
}

class FakeTracker {
  panels: any[] = [];
  widgetAdded = new Signal<this, any>(this);
  add(path: string, model: NotebookModel): any {
    const panel = {
      isDisposed: false,
      disposed: new Signal<any, void>(this),
      context: {
        path,
        model,
        isReady: true,
        ready: Promise.resolve(),
        pathChanged: new Signal<any, string>(this)
      }
    };
    this.panels.push(panel);
    this.widgetAdded.emit(panel);
    return panel;
  }
  forEach(fn: (panel: any) => void): void {
    this.panels.forEach(fn);
  }
  find(fn: (panel: any) => boolean): any {
    return this.panels.find(fn);
  }
}

function sources(model: NotebookModel): string[] {
  return model.sharedModel.cells.map(cell => cell.getSource());
}

describe('applyEdit on the shared notebook model', () => {
  it('inserts, edits, moves and deletes cells by id', () => {
    const model = notebookWith('a = 1', 'b = 2');
    const notebook = model.sharedModel;

    applyEdit(model, {
      op: 'insert_cell',
      index: -1,
      cell: {
        cell_type: 'code',
        id: 'new',
        source: 'c = 3',
        metadata: {}
      } as any
    });
    expect(sources(model)).toEqual(['a = 1', 'b = 2', 'c = 3']);
    expect(notebook.cells[2].getId()).toBe('new');

    applyEdit(model, {
      op: 'set_cell_source',
      cell_id: 'c0',
      source: 'a = 10'
    });
    applyEdit(model, { op: 'move_cell', cell_id: 'new', to_index: 0 });
    expect(sources(model)).toEqual(['c = 3', 'a = 10', 'b = 2']);

    applyEdit(model, { op: 'delete_cell', cell_id: 'c1' });
    expect(sources(model)).toEqual(['c = 3', 'a = 10']);
  });

  it('changes only the differing part of a source', () => {
    const model = notebookWith('x = 1\ny = 2\nz = 3');
    const cell = model.sharedModel.cells[0];
    const changes: any[] = [];
    cell.changed.connect((_, change) => changes.push(change.sourceChange));

    applyEdit(model, {
      op: 'set_cell_source',
      cell_id: 'c0',
      source: 'x = 1\ny = 20\nz = 3'
    });

    expect(cell.getSource()).toBe('x = 1\ny = 20\nz = 3');
    // Retain the common start, insert one character: the rest of the text is untouched.
    expect(changes).toEqual([[{ retain: 11 }, { insert: '0' }]]);
  });

  it('sets outputs, execution count and the running state of a code cell', () => {
    const model = notebookWith('print(6*7)');
    const output = { output_type: 'stream', name: 'stdout', text: '42\n' };

    applyEdit(model, {
      op: 'set_cell_outputs',
      cell_id: 'c0',
      outputs: [output as any],
      execution_count: null,
      running: true
    });
    const cell = model.sharedModel.cells[0] as any;
    expect(cell.executionState).toBe('running');

    applyEdit(model, {
      op: 'set_cell_outputs',
      cell_id: 'c0',
      outputs: [output as any],
      execution_count: 3
    });
    expect(cell.toJSON().outputs).toEqual([output]);
    expect(cell.execution_count).toBe(3);
    expect(cell.executionState).toBe('idle');
  });

  it('follows outputs that grow while the cell runs, and a clear_output', () => {
    const model = notebookWith('for i in range(3): print(i)');
    const stream = (text: string) => ({
      output_type: 'stream',
      name: 'stdout',
      text
    });
    const image = {
      output_type: 'display_data',
      data: { 'text/plain': '<Figure>' },
      metadata: {}
    };
    const steps: any[][] = [
      [stream('0\n')],
      [stream('0\n1\n')],
      [stream('0\n1\n2\n'), image],
      [stream('after clear\n')]
    ];
    for (const outputs of steps) {
      applyEdit(model, {
        op: 'set_cell_outputs',
        cell_id: 'c0',
        outputs,
        execution_count: null,
        running: true
      });
      expect((model.sharedModel.cells[0] as any).toJSON().outputs).toEqual(
        outputs
      );
    }
  });

  it('names a missing cell with the error code the server uses', () => {
    const model = notebookWith('a = 1');
    expect(() =>
      applyEdit(model, { op: 'delete_cell', cell_id: 'gone' })
    ).toThrow(expect.objectContaining({ code: 'E_CELL_NOT_FOUND' }));
  });
});

describe('NotebookBridge', () => {
  const URL = 'ws://localhost:8888/hdsp-agent/notebooks/ws?token=t';
  let tracker: FakeTracker;
  let bridge: NotebookBridge;

  beforeEach(() => {
    FakeSocket.reset();
    jest.useFakeTimers();
    tracker = new FakeTracker();
    bridge = new NotebookBridge({
      tracker: tracker as any,
      url: URL,
      WebSocket: FakeSocket as unknown as typeof WebSocket,
      retryDelays: [10]
    });
  });

  afterEach(() => {
    bridge.dispose();
    jest.useRealTimers();
  });

  it('announces the open notebooks on connect and on every change', async () => {
    tracker.add('RTC:work/a.ipynb', notebookWith('a'));
    bridge.open();
    const socket = FakeSocket.latest();
    socket.accept();
    // A panel announced for the first time has just loaded its notebook: the server replays its
    // journal of the agent's unsaved changes into it.
    expect(socket.sent).toEqual([
      {
        type: 'open',
        paths: ['work/a.ipynb'],
        editors: [],
        loaded: ['work/a.ipynb']
      }
    ]);

    const second = tracker.add('b.ipynb', notebookWith('b'));
    await Promise.resolve();
    second.isDisposed = true;
    tracker.panels.splice(1, 1);
    second.disposed.emit();
    jest.runOnlyPendingTimers();
    expect(socket.sent.slice(1)).toEqual([
      {
        type: 'open',
        paths: ['b.ipynb', 'work/a.ipynb'],
        editors: [],
        loaded: ['b.ipynb']
      },
      { type: 'open', paths: ['work/a.ipynb'], editors: [], loaded: [] }
    ]);
  });

  it('answers reads with the live model and applies edits, keeping unsaved typing', async () => {
    const model = notebookWith('x = 1');
    tracker.add('nb.ipynb', model);
    bridge.open();
    const socket = FakeSocket.latest();
    socket.accept();
    // The user types in the first cell and does not save.
    model.sharedModel.cells[0].setSource('x = 1  # typed');

    socket.deliver({
      type: 'request',
      id: 1,
      method: 'read',
      path: 'nb.ipynb'
    });
    socket.deliver({
      type: 'request',
      id: 2,
      method: 'apply',
      path: 'nb.ipynb',
      edit: {
        op: 'insert_cell',
        index: 1,
        cell: {
          cell_type: 'code',
          id: 'agent',
          source: 'print(6*7)',
          metadata: {}
        }
      }
    });

    await Promise.resolve();
    const [read, applied] = socket.sent.slice(1);
    expect(read.id).toBe(1);
    expect(read.result.notebook.cells[0].source).toBe('x = 1  # typed');
    expect(applied.id).toBe(2);
    // The answer is the cell the edit touched and the version, not the whole notebook.
    expect(applied.result.notebook).toBeUndefined();
    expect(applied.result.cell.id).toBe('agent');
    expect(applied.result.index).toBe(1);
    expect(applied.result.prior_cell).toBeNull();
    expect(applied.result.version).toBeGreaterThan(0);
    expect(sources(model)).toEqual(['x = 1  # typed', 'print(6*7)']);
  });

  it('answers an edit with the cell before and after, and a growing version', () => {
    const model = notebookWith('x = 1', 'y = 2');
    tracker.add('nb.ipynb', model);
    const edited = bridge.handle({
      type: 'request',
      id: 1,
      method: 'apply',
      path: 'nb.ipynb',
      edit: { op: 'set_cell_source', cell_id: 'c1', source: 'y = 20' }
    }).result as any;
    expect(edited.prior_index).toBe(1);
    expect(edited.prior_cell.source).toBe('y = 2');
    expect(edited.index).toBe(1);
    expect(edited.cell.source).toBe('y = 20');
    const deleted = bridge.handle({
      type: 'request',
      id: 2,
      method: 'apply',
      path: 'nb.ipynb',
      edit: { op: 'delete_cell', cell_id: 'c0' }
    }).result as any;
    expect(deleted.cell).toBeNull();
    expect(deleted.prior_cell.id).toBe('c0');
    expect(deleted.version).toBeGreaterThan(edited.version);
  });

  it('reads one cell with its index, the cell count, the kernelspec and the version', () => {
    const model = notebookWith('x = 1', 'y = 2', 'z = 3');
    model.sharedModel.setMetadata('kernelspec', {
      name: 'python3',
      display_name: 'Python 3'
    });
    model.sharedModel.setMetadata('language_info', { name: 'python' });
    tracker.add('nb.ipynb', model);
    const byId = bridge.handle({
      type: 'request',
      id: 1,
      method: 'read_cell',
      path: 'nb.ipynb',
      cell_id: 'c1'
    }).result as any;
    expect(byId.index).toBe(1);
    expect(byId.cell_count).toBe(3);
    expect(byId.cell.id).toBe('c1');
    expect(byId.cell.source).toBe('y = 2');
    expect(byId.kernelspec.name).toBe('python3');
    expect(byId.language).toBe('python');
    expect(byId.notebook).toBeUndefined();
    const last = bridge.handle({
      type: 'request',
      id: 2,
      method: 'read_cell',
      path: 'nb.ipynb',
      index: -1
    }).result as any;
    expect(last.cell.id).toBe('c2');
    expect(last.index).toBe(2);
    const missing = bridge.handle({
      type: 'request',
      id: 3,
      method: 'read_cell',
      path: 'nb.ipynb',
      cell_id: 'gone'
    });
    expect(missing.error?.code).toBe('E_CELL_NOT_FOUND');
  });

  it('refuses an edit computed from a version the user has changed since', () => {
    const model = notebookWith('x = 1', 'y = 2');
    tracker.add('nb.ipynb', model);
    const read = bridge.handle({
      type: 'request',
      id: 1,
      method: 'read_cell',
      path: 'nb.ipynb',
      cell_id: 'c1'
    }).result as any;
    // The user types in the other cell after the read.
    model.sharedModel.cells[0].setSource('x = 1  # typed');
    const refused = bridge.handle({
      type: 'request',
      id: 2,
      method: 'apply',
      path: 'nb.ipynb',
      edit: { op: 'set_cell_source', cell_id: 'c1', source: 'y = 20' },
      base_version: read.version
    });
    expect(refused.error?.code).toBe('E_NOTEBOOK_CHANGED');
    expect(sources(model)).toEqual(['x = 1  # typed', 'y = 2']);
    // Read again: the edit goes through.
    const again = bridge.handle({
      type: 'request',
      id: 3,
      method: 'read_cell',
      path: 'nb.ipynb',
      cell_id: 'c1'
    }).result as any;
    expect(again.version).toBeGreaterThan(read.version);
    const applied = bridge.handle({
      type: 'request',
      id: 4,
      method: 'apply',
      path: 'nb.ipynb',
      edit: { op: 'set_cell_source', cell_id: 'c1', source: 'y = 20' },
      base_version: again.version
    });
    expect(applied.error).toBeUndefined();
    expect(sources(model)).toEqual(['x = 1  # typed', 'y = 20']);
  });

  it('restores a snapshot and reports errors as codes', () => {
    const model = notebookWith('x = 1');
    tracker.add('nb.ipynb', model);
    bridge.open();
    const socket = FakeSocket.latest();
    socket.accept();

    const snapshot = bridge.handle({
      type: 'request',
      id: 1,
      method: 'snapshot',
      path: 'nb.ipynb'
    });
    applyEdit(model, { op: 'delete_cell', cell_id: 'c0' });
    expect(sources(model)).toEqual([]);
    bridge.handle({
      type: 'request',
      id: 2,
      method: 'restore',
      path: 'nb.ipynb',
      notebook: snapshot.result!.notebook as any
    });
    expect(sources(model)).toEqual(['x = 1']);
    expect(model.sharedModel.cells[0].getId()).toBe('c0');

    const missing = bridge.handle({
      type: 'request',
      id: 3,
      method: 'read',
      path: 'other.ipynb'
    });
    expect(missing.error?.code).toBe('E_NOTEBOOK_BRIDGE');
  });

  it('answers a brief read without image bytes or long text, and a snapshot whole', () => {
    const model = notebookWith('plot()', 'print(log)');
    // A PNG's first bytes (signature and IHDR: 640x480), then the picture.
    const png = btoa(
      '\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x02\x80\x00\x00\x01\xe0' +
        'p'.repeat(30_000)
    );
    const log = 'line\n'.repeat(10_000);
    applyEdit(model, {
      op: 'set_cell_outputs',
      cell_id: 'c0',
      outputs: [
        {
          output_type: 'display_data',
          data: { 'image/png': png, 'text/plain': '<Figure>' },
          metadata: {}
        }
      ],
      execution_count: 1
    } as any);
    applyEdit(model, {
      op: 'set_cell_outputs',
      cell_id: 'c1',
      outputs: [{ output_type: 'stream', name: 'stdout', text: log }],
      execution_count: 2
    } as any);
    tracker.add('nb.ipynb', model);

    const brief = bridge.handle({
      type: 'request',
      id: 1,
      method: 'read',
      path: 'nb.ipynb',
      output_chars: 100
    });
    const text = JSON.stringify(brief);
    expect(text.length).toBeLessThan(3_000);
    const cells = (brief.result!.notebook as any).cells;
    const plot = cells[0].outputs[0];
    expect(plot.data['image/png']).toBe('');
    expect(plot.data['text/plain']).toBe('<Figure>');
    expect(plot.metadata.hdsp_agent_omitted['image/png']).toEqual({
      bytes: 30_024,
      head: png.slice(0, 44)
    });
    expect(cells[1].outputs[0].text).toBe(
      log.slice(0, 100) + `\n[… not read: ${log.length - 100} more characters]`
    );
    expect(brief.result!.omitted_chars).toBe(png.length + log.length - 100);

    for (const request of [
      { method: 'snapshot' as const },
      { method: 'read' as const }
    ]) {
      const whole = bridge.handle({
        type: 'request',
        id: 2,
        path: 'nb.ipynb',
        ...request
      });
      const wholeCells = (whole.result!.notebook as any).cells;
      expect(wholeCells[0].outputs[0].data['image/png']).toBe(png);
      expect(wholeCells[1].outputs[0].text).toBe(log);
    }

    // An overview of the first cell only: the second comes with its source, count and id, no outputs.
    const first = bridge.handle({
      type: 'request',
      id: 3,
      method: 'read',
      path: 'nb.ipynb',
      output_chars: 100,
      outputs_start: 0,
      outputs_stop: 1
    });
    const [shown, other] = (first.result!.notebook as any).cells;
    expect(shown.outputs[0].data['text/plain']).toBe('<Figure>');
    expect(other).toMatchObject({
      id: 'c1',
      cell_type: 'code',
      source: 'print(log)',
      execution_count: 2,
      outputs: []
    });
    expect(JSON.stringify(first).length).toBeLessThan(1_000);
    expect((first.result!.notebook as any).nbformat_minor).toBe(5);
  });

  it('sends nothing back for progress-only requests and reconnects after a drop', () => {
    const model = notebookWith('print(1)');
    tracker.add('nb.ipynb', model);
    bridge.open();
    const socket = FakeSocket.latest();
    socket.accept();
    socket.deliver({
      type: 'request',
      id: null,
      method: 'apply',
      path: 'nb.ipynb',
      edit: {
        op: 'set_cell_outputs',
        cell_id: 'c0',
        outputs: [],
        execution_count: null,
        running: true
      }
    });
    expect(socket.sent).toHaveLength(1);

    socket.drop();
    jest.advanceTimersByTime(10);
    const again = FakeSocket.latest();
    expect(again).not.toBe(socket);
    again.accept();
    // The page kept its notebook (and any agent change in it): nothing to replay.
    expect(again.sent).toEqual([
      { type: 'open', paths: ['nb.ipynb'], editors: [], loaded: [] }
    ]);
  });
});

describe('localPath', () => {
  it('drops a drive prefix and leading slashes, as the server does', () => {
    expect(localPath('RTC:dir/nb.ipynb')).toBe('dir/nb.ipynb');
    expect(localPath('/nb.ipynb')).toBe('nb.ipynb');
    expect(localPath('dir:x/nb.ipynb')).toBe('x/nb.ipynb');
    expect(localPath('a/b:c.ipynb')).toBe('a/b:c.ipynb');
  });
});
