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
import { AgentModel } from '../model';
import {
  fakeAgentServer,
  makeModel,
  SESSION_ID,
  sessionRecord,
  standardRoutes
} from './fakeServer';
import { event, FakeSocket, simpleTurn } from './fakeSocket';

const trans = nullTranslator.load('hdsp_agent');

async function setup(
  running = false,
  preferences: Partial<AgentModel['preferences']> = {}
) {
  const { settings } = fakeAgentServer(standardRoutes());
  const model = makeModel(settings, '0.1.0');
  await model.connect();
  model.preferences = { ...model.preferences, ...preferences };
  const send = jest.spyOn(model, 'send').mockResolvedValue(true);
  const onStop = jest.fn();
  const view = render(
    <Composer model={model} trans={trans} running={running} onStop={onStop} />
  );
  const input = screen.getByRole('textbox', {
    name: 'Message'
  }) as HTMLTextAreaElement;
  return { model, send, onStop, input, view };
}

describe('Composer', () => {
  it('sends on Enter and clears the box', async () => {
    const { send, input } = await setup();
    fireEvent.change(input, { target: { value: 'Plot the data' } });

    fireEvent.keyDown(input, { key: 'Enter' });

    await waitFor(() => expect(send).toHaveBeenCalledWith('Plot the data'));
    expect(input.value).toBe('');
  });

  it('keeps Shift+Enter for a new line', async () => {
    const { send, input } = await setup();
    fireEvent.change(input, { target: { value: 'line one' } });

    fireEvent.keyDown(input, { key: 'Enter', shiftKey: true });

    expect(send).not.toHaveBeenCalled();
  });

  it('does not send the Enter that ends an IME composition', async () => {
    const { send, input } = await setup();
    fireEvent.change(input, { target: { value: '안녕' } });

    fireEvent.keyDown(input, { key: 'Enter', keyCode: 229 });

    expect(send).not.toHaveBeenCalled();
  });

  it('sends on Ctrl+Enter only when Enter-to-send is off', async () => {
    const { send, input } = await setup(false, { sendOnEnter: false });
    fireEvent.change(input, { target: { value: 'Hello' } });

    fireEvent.keyDown(input, { key: 'Enter' });
    expect(send).not.toHaveBeenCalled();
    fireEvent.keyDown(input, { key: 'Enter', ctrlKey: true });

    await waitFor(() => expect(send).toHaveBeenCalledWith('Hello'));
  });

  it('gives the message back when sending fails', async () => {
    const { send, input } = await setup();
    send.mockResolvedValue(false);
    fireEvent.change(input, { target: { value: 'Try this' } });

    fireEvent.click(screen.getByRole('button', { name: 'Send' }));

    await waitFor(() => expect(input.value).toBe('Try this'));
  });

  it('shows Stop instead of Send while a turn runs, and Escape stops', async () => {
    const { onStop, input } = await setup(true);
    expect(screen.queryByRole('button', { name: 'Send' })).toBeNull();

    fireEvent.click(screen.getByRole('button', { name: 'Stop' }));
    fireEvent.keyDown(input, { key: 'Escape' });

    expect(onStop).toHaveBeenCalledTimes(2);
  });

  it('queues a message sent while the agent works, shows it, and sends it when the turn ends', async () => {
    const { model, send, input, onStop, view } = await setup(true);
    expect(input.placeholder).toContain('Enter queues your message');
    fireEvent.change(input, { target: { value: 'Then plot it' } });

    fireEvent.keyDown(input, { key: 'Enter' });

    expect(send).not.toHaveBeenCalled();
    expect(input.value).toBe('');
    const queued = screen.getByRole('status');
    expect(queued.textContent).toContain(
      'Queued, sent when the agent finishes:'
    );
    expect(queued.textContent).toContain('Then plot it');

    view.rerender(
      <Composer model={model} trans={trans} running={false} onStop={onStop} />
    );

    await waitFor(() => expect(send).toHaveBeenCalledWith('Then plot it'));
    expect(send).toHaveBeenCalledTimes(1);
    expect(screen.queryByText('Then plot it')).toBeNull();
  });

  it('gives a queued message back to edit, unsent', async () => {
    const { model, send, input, onStop, view } = await setup(true);
    fireEvent.change(input, { target: { value: 'Then plot it' } });
    fireEvent.keyDown(input, { key: 'Enter' });

    fireEvent.click(screen.getByRole('button', { name: 'Edit' }));

    expect(input.value).toBe('Then plot it');
    expect(screen.queryByRole('status')).toBeNull();
    view.rerender(
      <Composer model={model} trans={trans} running={false} onStop={onStop} />
    );
    expect(send).not.toHaveBeenCalled();
  });

  it('shows the attached context as chips the user can remove', async () => {
    const { model } = await setup();
    act(() =>
      model.context.update({
        documentPath: 'work/analysis.ipynb',
        cells: [
          { id: 'a', index: 2, source: 'x' },
          { id: 'b', index: 3, source: 'y' }
        ],
        activeCellId: 'b'
      })
    );

    expect(await screen.findByText('analysis.ipynb')).toBeTruthy();
    expect(screen.getByText('2 cells')).toBeTruthy();

    fireEvent.click(
      screen.getByRole('button', {
        name: 'Remove the selected cells from the context'
      })
    );
    await waitFor(() => expect(screen.queryByText('2 cells')).toBeNull());
    fireEvent.click(
      screen.getByRole('button', {
        name: 'Remove work/analysis.ipynb from the context'
      })
    );
    await waitFor(() =>
      expect(screen.queryByText('analysis.ipynb')).toBeNull()
    );
    expect(model.context.attached()).toEqual({});
  });

  it('picks the model and the mode', async () => {
    const { model } = await setup();

    fireEvent.change(screen.getByRole('combobox', { name: 'Model' }), {
      target: { value: 'big' }
    });
    fireEvent.change(screen.getByRole('combobox', { name: 'Mode' }), {
      target: { value: 'accept-edits' }
    });

    expect(model.selectedModel).toBe('big');
    expect(model.mode).toBe('accept-edits');
  });

  it('offers undo once a turn has ended, and asks the server to undo it', async () => {
    const { settings } = fakeAgentServer({
      ...standardRoutes([sessionRecord()]),
      [`POST sessions/${SESSION_ID}/undo`]: () => ({
        restored: ['a.ipynb: cell x']
      })
    });
    const model = makeModel(settings, '0.1.0');
    await model.connect();
    render(
      <Composer
        model={model}
        trans={trans}
        running={false}
        onStop={jest.fn()}
      />
    );
    const undo = screen.getByRole('button', {
      name: 'Undo'
    }) as HTMLButtonElement;
    expect(undo.disabled).toBe(true);

    const socket = FakeSocket.latest();
    act(() => {
      socket.accept();
      simpleTurn().forEach(message => socket.deliver(message));
    });
    await waitFor(() => expect(undo.disabled).toBe(false));
    const request = jest.spyOn(model, 'undoLastTurn');
    fireEvent.click(undo);

    await waitFor(() => expect(request).toHaveBeenCalled());
    await expect(request.mock.results[0].value).resolves.toBe(true);
    act(() =>
      socket.deliver(
        event(8, 'turn.undone', {
          turn_id: 't1',
          restored: ['a.ipynb: cell x']
        })
      )
    );
    await waitFor(() => expect(undo.disabled).toBe(true));
  });

  it('reports what the server refuses to undo', async () => {
    const { settings } = fakeAgentServer({
      ...standardRoutes([sessionRecord()]),
      [`POST sessions/${SESSION_ID}/undo`]: () =>
        new Response(
          JSON.stringify({ message: 'turn t1 changed no file or notebook' }),
          {
            status: 409
          }
        )
    });
    const model = makeModel(settings, '0.1.0');
    await model.connect();

    await expect(model.undoLastTurn()).resolves.toBe(false);
    expect(model.actionError).toBe('turn t1 changed no file or notebook');
  });
});
