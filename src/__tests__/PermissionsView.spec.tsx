import { nullTranslator } from '@jupyterlab/translation';
import {
  fireEvent,
  render,
  screen,
  waitFor,
  within
} from '@testing-library/react';
import * as React from 'react';

import {
  grantWords,
  PermissionsView,
  ruleWords
} from '../components/PermissionsView';
import { IPermissionsOverview } from '../tokens';
import { fakeAgentServer, makeModel, standardRoutes } from './fakeServer';

const trans = nullTranslator.load('hdsp_agent');

/**
 * A server holding grants and rules the way hdsp_agent/permissions/grants.py does, recording what
 * the view asked to remove.
 */
async function setup() {
  const state: IPermissionsOverview = {
    session: [],
    saved: ['insert_cell(analysis/**)', 'edit_existing_file(src/app.py)'],
    file: '/home/me/.jupyter/hdsp_agent/permissions.json'
  };
  const revoked: any[] = [];
  const { settings } = fakeAgentServer({
    ...standardRoutes(),
    'GET permissions': () => state,
    'POST permissions/revoke': (_request, body) => {
      revoked.push(body);
      state.saved = state.saved.filter(rule => rule !== body.rule);
      return state;
    }
  });
  const model = makeModel(settings, '0.1.0');
  await model.connect();
  render(<PermissionsView model={model} trans={trans} />);
  return { state, revoked };
}

describe('PermissionsView', () => {
  it('lists the saved rules with where they apply, and the file', async () => {
    await setup();
    const view = await screen.findByRole('region', { name: 'Permissions' });
    await waitFor(() =>
      expect(view.textContent).toContain(
        'Insert a cell into the notebook, in the folder analysis'
      )
    );
    expect(view.textContent).toContain('Change app.py');
    expect(view.textContent).not.toContain('edit_existing_file');
    expect(view.textContent).toContain(
      'Saved in /home/me/.jupyter/hdsp_agent/permissions.json'
    );
    expect(view.textContent).toContain('No chat is open.');
  });

  it('removes a saved rule and shows the list the server now has', async () => {
    const { revoked } = await setup();
    const remove = await screen.findByRole('button', {
      name: 'Remove: Insert a cell into the notebook, in the folder analysis'
    });

    fireEvent.click(remove);

    await waitFor(() =>
      expect(revoked).toEqual([
        { kind: 'saved', rule: 'insert_cell(analysis/**)' }
      ])
    );
    const view = screen.getByRole('region', { name: 'Permissions' });
    await waitFor(() =>
      expect(within(view).queryByText(/in the folder analysis/)).toBeNull()
    );
    expect(view.textContent).toContain('Change app.py');
    expect(view.textContent).not.toContain('edit_existing_file');
  });
});

describe('grant words', () => {
  it.each([
    [
      { tool: 'insert_cell', subject: 'work/errors.ipynb' },
      'Insert a cell into errors.ipynb'
    ],
    [
      { tool: 'run_terminal_command', subject: 'python train.py' },
      'Run a command: python train.py'
    ],
    [{ tool: 'demo__echo', subject: '' }, 'demo__echo']
  ])('%j reads "%s"', (grant, words) => {
    expect(grantWords(grant, trans)).toBe(words);
  });

  it.each([
    ['insert_cell', 'Insert a cell into the notebook, everywhere'],
    [
      'insert_cell(**)',
      'Insert a cell into the notebook, anywhere in the project'
    ],
    [
      'insert_cell(/home/u/p/**)',
      'Insert a cell into the notebook, in the folder p'
    ],
    ['insert_cell(perm.ipynb)', 'Insert a cell into perm.ipynb'],
    ['run_terminal_command(make test)', 'Run a command: make test'],
    ['demo__echo(x)', 'demo__echo, for x only']
  ])('rule %s reads "%s"', (rule, words) => {
    expect(ruleWords(rule, trans)).toBe(words);
  });
});
