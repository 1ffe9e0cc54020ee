import { ContextState } from '../contextState';

const notebook: ContextState.ICurrent = {
  documentPath: 'analysis.ipynb',
  cells: [
    { id: 'a', index: 0, source: 'import pandas as pd' },
    { id: 'b', index: 1, source: 'df = pd.read_csv("x.csv")' }
  ],
  activeCellId: 'b'
};

const states: ContextState[] = [];
function make(): ContextState {
  const state = new ContextState();
  states.push(state);
  return state;
}
afterEach(() => states.splice(0).forEach(state => state.dispose()));

describe('ContextState', () => {
  it('attaches the active notebook, its selected cells and the active cell', () => {
    const state = make();
    state.update(notebook);

    expect(state.attached()).toEqual({
      active_document: { path: 'analysis.ipynb' },
      active_cell_id: 'b',
      selected_cells: notebook.cells
    });
  });

  it('sends nothing of the notebook once its chip is removed', () => {
    const state = make();
    state.update(notebook);
    state.removeDocument();

    expect(state.attached()).toEqual({});
    expect(state.documentAttached).toBe(false);
    expect(state.cellsAttached).toBe(false);
  });

  it('keeps the notebook but not the cells when the cells chip is removed', () => {
    const state = make();
    state.update(notebook);
    state.removeCells();

    expect(state.attached()).toEqual({
      active_document: { path: 'analysis.ipynb' },
      active_cell_id: 'b'
    });
  });

  it('attaches everything again after sending or when another document becomes active', () => {
    const state = make();
    state.update(notebook);
    state.removeDocument();
    state.reset();
    expect(state.documentAttached).toBe(true);

    state.removeCells();
    state.update({ ...notebook, documentPath: 'other.ipynb' });
    expect(state.cellsAttached).toBe(true);

    state.removeCells();
    state.update({
      ...notebook,
      documentPath: 'other.ipynb',
      activeCellId: 'a'
    });
    expect(state.cellsAttached).toBe(false);
  });

  it('reads fresh sources from its provider on refresh', () => {
    const state = make();
    let source = 'x = 1';
    state.provider = () => ({
      documentPath: 'n.ipynb',
      cells: [{ id: 'a', index: 0, source }],
      activeCellId: 'a'
    });
    state.refresh();
    source = 'x = 2';
    state.refresh();

    expect(state.attached().selected_cells?.[0].source).toBe('x = 2');
  });
});
