import { nullTranslator } from '@jupyterlab/translation';
import { CommandRegistry } from '@lumino/commands';
import { fireEvent, render, screen } from '@testing-library/react';
import * as React from 'react';

import { ReplayReport } from '../components/ReplayReport';
import { Conversation, IAssistantItem } from '../conversation';
import { markNumbers } from '../numberMarks';
import { CommandIDs } from '../tokens';
import { event } from './fakeSocket';

const trans = nullTranslator.load('hdsp_agent');

describe('numbers tied to outputs', () => {
  it('wraps each checked number where it stands: a link to its output, or a mark when found nowhere', () => {
    const host = document.createElement('div');
    host.innerHTML =
      '<p>The mean is <strong>312.8</strong> over 48,213 rows; 1312.8 is not it.</p>' +
      '<pre>312.8 in code</pre><p>And 290.5 is made up.</p>';
    markNumbers(
      host,
      [
        {
          text: '312.8',
          start: 0,
          end: 0,
          found: true,
          source: {
            call_id: 'c1',
            tool: 'read_file',
            line: 'mean: 312.774',
            line_number: 2
          }
        },
        {
          text: '48,213',
          start: 0,
          end: 0,
          found: true,
          source: {
            call_id: 'c1',
            tool: 'read_file',
            line: 'rows: 48213',
            line_number: 1
          }
        },
        { text: '290.5', start: 0, end: 0, found: false, source: null }
      ],
      trans
    );
    const found = host.querySelectorAll('.jp-hdsp-Number.jp-mod-found');
    expect(Array.from(found).map(node => node.textContent)).toEqual([
      '312.8',
      '48,213'
    ]);
    expect(found[0].getAttribute('title')).toBe(
      'From read_file, line 2: mean: 312.774'
    );
    expect(found[0].parentElement?.tagName).toBe('STRONG');
    const unfound = host.querySelector('.jp-hdsp-Number.jp-mod-unfound');
    expect(unfound?.textContent).toBe('290.5');
    expect(unfound?.getAttribute('title')).toBe(
      'Not found in any output of this turn'
    );
    expect(host.querySelector('pre')?.textContent).toBe('312.8 in code');
    expect(host.textContent).toContain('1312.8 is not it');
  });

  it('puts the marks on the answer they belong to and the kernel changes on the conversation', () => {
    const conversation = new Conversation();
    conversation.receiveAll([
      event(1, 'message.user', { turn_id: 't1', content: 'go', context: {} }),
      event(2, 'assistant.message', {
        message_id: 'm1',
        content: 'It is 42.5.',
        reasoning: '',
        tool_calls: []
      }),
      event(3, 'kernel.changes', {
        turn_id: 't1',
        notebooks: {
          'nb.ipynb': [
            { name: 'total', change: 'created', type: 'int', preview: '42' }
          ]
        }
      }),
      event(4, 'answer.numbers', {
        turn_id: 't1',
        message_id: 'm1',
        marks: [{ text: '42.5', start: 6, end: 10, found: false }]
      }),
      event(5, 'turn.end', { turn_id: 't1', reason: 'completed' })
    ]);
    const answer = conversation.items.find(
      item => item.kind === 'assistant'
    ) as IAssistantItem;
    expect(answer.numbers?.map(mark => mark.found)).toEqual([false]);
    expect(Object.keys(conversation.kernelChanges)).toEqual(['nb.ipynb']);
    conversation.dismissKernelChanges();
    expect(conversation.kernelChanges).toEqual({});
  });
});

describe('the replay card', () => {
  it('names each finding and shows its cell in the notebook', () => {
    const commands = new CommandRegistry();
    const revealed: unknown[] = [];
    commands.addCommand(CommandIDs.revealCell, {
      execute: args => {
        revealed.push(args);
      }
    });
    render(
      <ReplayReport
        trans={trans}
        commands={commands}
        report={{
          path: 'nb.ipynb',
          kernel_name: 'python3',
          seconds: 2.2,
          cells_compared: 3,
          cells_same: 2,
          stopped: null,
          reproducible: false,
          findings: [
            {
              index: 1,
              cell_id: 'product',
              cause: 'used_before_defined',
              cause_title: 'a name used before the cell that defines it',
              explanation:
                '`scale` is used here but first defined by a later cell',
              what: 'error',
              saved: '21',
              replayed: "NameError: name 'scale' is not defined"
            }
          ]
        }}
      />
    );
    expect(
      screen.getByText('2 of 3 run cells reproduce in a fresh kernel (2.2 s).')
    ).toBeTruthy();
    expect(
      screen.getByText('a name used before the cell that defines it')
    ).toBeTruthy();
    fireEvent.click(screen.getByRole('button', { name: 'Cell 2' }));
    expect(revealed).toEqual([{ path: 'nb.ipynb', index: 1 }]);
  });
});
