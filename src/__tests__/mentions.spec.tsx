import { nullTranslator } from '@jupyterlab/translation';
import {
  act,
  fireEvent,
  render,
  screen,
  waitFor
} from '@testing-library/react';
import * as React from 'react';

import { Composer } from '../components/Composer';
import {
  cellSuggestions,
  insertMention,
  mentionAt,
  variableSuggestions
} from '../mentions';
import { fakeAgentServer, makeModel, standardRoutes } from './fakeServer';

const trans = nullTranslator.load('hdsp_agent');

describe('mention helpers', () => {
  it('finds the @query being typed at the cursor, not an email address', () => {
    expect(mentionAt('look at @dat', 12)).toEqual({ start: 8, query: 'dat' });
    expect(mentionAt('@', 1)).toEqual({ start: 0, query: '' });
    expect(mentionAt('mail me@host', 12)).toBeNull();
    expect(mentionAt('@data and more', 14)).toBeNull();
  });

  it('replaces the query with the chosen label', () => {
    expect(insertMention('see @da now', 4, 7, 'data.csv')).toEqual({
      text: 'see @data.csv  now',
      cursor: 14
    });
  });

  it('suggests cells by number or content and variables by prefix', () => {
    const cells = [
      { cell_id: 'a', index: 0, source: 'import pandas as pd' },
      { cell_id: 'b', index: 1, source: 'df = pd.read_csv("x.csv")' }
    ];
    expect(cellSuggestions(cells, 'cell2').map(item => item.mention)).toEqual([
      {
        kind: 'cell',
        cell_id: 'b',
        index: 1,
        source: 'df = pd.read_csv("x.csv")'
      }
    ]);
    expect(cellSuggestions(cells, 'read_csv').map(item => item.label)).toEqual([
      'cell2'
    ]);
    const names = [
      { name: 'df_clean', module: false },
      { name: 'df', module: false },
      { name: 'df.head', module: false },
      { name: '_tmp', module: false },
      { name: '__name__', module: false },
      { name: 'df', module: false },
      { name: 'datetime', module: true }
    ];
    expect(variableSuggestions(names, 'd').map(item => item.label)).toEqual([
      'df',
      'df_clean'
    ]);
    // A module only when its whole name is typed.
    expect(
      variableSuggestions(names, 'datetime').map(item => item.label)
    ).toEqual(['datetime']);
  });
});

describe('@ in the composer', () => {
  it('offers files, cells and variables, and a chosen one becomes a chip sent with the message', async () => {
    const sent: any[] = [];
    const { settings } = fakeAgentServer({
      ...standardRoutes([]),
      'GET mentions': () => ({ files: ['data/sales.csv'] })
    });
    const model = makeModel(settings, '0.1.0');
    model.mentionSource = {
      cells: () => [{ cell_id: 'c1', index: 0, source: 'sales = load()' }],
      variables: async () => [
        { name: 'sales', module: false },
        { name: 'sales_by_region', module: false }
      ]
    };
    model.send = async (text: string) => {
      sent.push({ text, context: model.context.attached() });
      return true;
    };
    await act(() => model.connect());
    render(
      <Composer
        model={model}
        trans={trans}
        running={false}
        onStop={() => undefined}
      />
    );

    const input = screen.getByRole('textbox', {
      name: 'Message'
    }) as HTMLTextAreaElement;
    fireEvent.change(input, {
      target: { value: 'plot @sal', selectionStart: 9 }
    });
    const list = await screen.findByRole('listbox', { name: 'Mention' });
    await waitFor(() =>
      expect(list.querySelectorAll('[role="option"]').length).toBe(4)
    );
    expect(
      [...list.querySelectorAll('[role="option"]')].map(
        item => item.textContent
      )
    ).toEqual([
      '@salesvariable',
      '@sales_by_regionvariable',
      '@cell1sales = load()',
      '@data/sales.csvfile'
    ]);
    fireEvent.keyDown(input, { key: 'ArrowDown' });
    fireEvent.keyDown(input, { key: 'ArrowDown' });
    fireEvent.keyDown(input, { key: 'ArrowDown' });
    fireEvent.keyDown(input, { key: 'Enter' });
    expect(input.value).toBe('plot @data/sales.csv ');
    expect(screen.queryByRole('listbox')).toBeNull();
    expect(screen.getByText('@sales.csv')).toBeTruthy();

    fireEvent.keyDown(input, { key: 'Enter' });
    await waitFor(() => expect(sent.length).toBe(1));
    expect(sent[0].context.mentions).toEqual([
      { kind: 'file', path: 'data/sales.csv' }
    ]);
  });
});
