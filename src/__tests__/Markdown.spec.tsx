import { Clipboard } from '@jupyterlab/apputils';
import { nullTranslator } from '@jupyterlab/translation';
import { fireEvent, render, waitFor } from '@testing-library/react';
import * as React from 'react';

import { Markdown } from '../components/Markdown';
import { CommandIDs } from '../tokens';
import { makeCommands, makeRendermime } from './rendermime';

const trans = nullTranslator.load('hdsp_agent');

describe('Markdown', () => {
  it('renders through rendermime and sanitizes what the model wrote', async () => {
    const { commands } = makeCommands();
    const { container } = render(
      <Markdown
        source={'Use **pandas**. <img src=x onerror="alert(1)">'}
        rendermime={makeRendermime()}
        commands={commands}
        trans={trans}
      />
    );

    await waitFor(() =>
      expect(container.querySelector('strong')?.textContent).toBe('pandas')
    );
    expect(container.querySelector('img')).toBeTruthy();
    expect(container.querySelector('[onerror]')).toBeNull();
  });

  it('puts copy, insert and run on each code block', async () => {
    const { commands, executed } = makeCommands();
    const copy = jest
      .spyOn(Clipboard, 'copyToSystem')
      .mockImplementation(() => undefined);
    const { container, getByRole } = render(
      <Markdown
        source={'Try:\n\n```python\nprint(6 * 7)\n```\n'}
        rendermime={makeRendermime()}
        commands={commands}
        trans={trans}
      />
    );
    await waitFor(() =>
      expect(container.querySelector('.jp-hdsp-CodeBlock pre')).toBeTruthy()
    );

    fireEvent.click(getByRole('button', { name: 'Copy' }));
    fireEvent.click(getByRole('button', { name: 'Insert' }));
    fireEvent.click(getByRole('button', { name: 'Run' }));

    expect(copy).toHaveBeenCalledWith('print(6 * 7)');
    await waitFor(() =>
      expect(executed).toEqual([
        [CommandIDs.insertCode, { code: 'print(6 * 7)' }],
        [CommandIDs.runCode, { code: 'print(6 * 7)' }]
      ])
    );
    copy.mockRestore();
  });

  it('follows the text as it streams in', async () => {
    const { commands } = makeCommands();
    const rendermime = makeRendermime();
    const { container, rerender } = render(
      <Markdown
        source="Hel"
        rendermime={rendermime}
        commands={commands}
        trans={trans}
        streaming
      />
    );
    await waitFor(() => expect(container.textContent).toBe('Hel'));

    rerender(
      <Markdown
        source="Hello there"
        rendermime={rendermime}
        commands={commands}
        trans={trans}
      />
    );

    await waitFor(() => expect(container.textContent).toBe('Hello there'));
  });
});
