import { nullTranslator } from '@jupyterlab/translation';
import { render, screen } from '@testing-library/react';
import * as React from 'react';

import { formatTokens, UsageBreakdown } from '../components/UsageMeter';
import { Conversation } from '../conversation';

const trans = nullTranslator.load('hdsp_agent');

const envelope = (seq: number) => ({ seq, ts: 0, session_id: 's' });

describe('conversation usage', () => {
  it('adds up the tokens of every step and keeps the last prompt against the window', () => {
    const conversation = new Conversation();
    conversation.receive({
      ...envelope(1),
      type: 'turn.start',
      turn_id: 't',
      model: 'm',
      context_window: 4096
    } as any);
    for (const [seq, prompt, completion] of [
      [2, 1000, 50],
      [3, 1800, 20]
    ]) {
      conversation.receive({
        ...envelope(seq),
        type: 'assistant.message',
        message_id: `m${seq}`,
        content: '',
        reasoning: '',
        tool_calls: [],
        usage: {
          prompt_tokens: prompt,
          completion_tokens: completion,
          estimated: seq === 3
        }
      } as any);
    }
    expect(conversation.usage).toEqual({
      tokens: 2870,
      lastPromptTokens: 1800,
      contextWindow: 4096,
      estimated: true
    });
    expect(formatTokens(2870)).toBe('2.9k');
    expect(formatTokens(512)).toBe('512');
    expect(formatTokens(250_000)).toBe('250k');
  });

  it('breaks each turn down by part, adding up to what the server reported, with the cost when priced', () => {
    const conversation = new Conversation();
    const steps: [number, string, number, number, Record<string, number>][] = [
      [
        2,
        't1',
        1000,
        50,
        { system: 400, tools: 300, history: 300, tool_results: 0 }
      ],
      [
        3,
        't1',
        1400,
        20,
        { system: 400, tools: 300, history: 320, tool_results: 380 }
      ],
      [
        5,
        't2',
        1500,
        30,
        { system: 400, tools: 300, history: 800, tool_results: 0 }
      ]
    ];
    for (const [seq, turn, prompt, completion, breakdown] of steps) {
      if (seq === 2 || seq === 5) {
        conversation.receive({
          ...envelope(seq - 1),
          type: 'message.user',
          turn_id: turn,
          content: 'hi'
        } as any);
      }
      conversation.receive({
        ...envelope(seq),
        type: 'assistant.message',
        message_id: `m${seq}`,
        content: '',
        reasoning: '',
        tool_calls: [],
        usage: {
          prompt_tokens: prompt,
          completion_tokens: completion,
          estimated: false,
          breakdown
        }
      } as any);
    }
    const turns = conversation.turnUsage;
    expect(turns.map(t => [t.turnId, t.steps, t.prompt, t.completion])).toEqual(
      [
        ['t1', 2, 2400, 70],
        ['t2', 1, 1500, 30]
      ]
    );
    for (const turn of turns) {
      expect(turn.system + turn.tools + turn.history + turn.toolResults).toBe(
        turn.prompt
      );
    }
    render(
      <UsageBreakdown
        turns={turns}
        info={{
          name: 'm',
          model: 'm',
          base_url: null,
          context_window: 8192,
          vision: false,
          price_per_mtok_in: 1,
          price_per_mtok_out: 2
        }}
        trans={trans}
      />
    );
    const table = screen.getByRole('table', { name: 'Tokens per turn' });
    const first = table.querySelector('[data-turn="1"]')!;
    expect(
      Array.from(first.querySelectorAll('td')).map(cell => cell.textContent)
    ).toEqual(['1', '800', '600', '620', '380', '70', '2470', '$0.0025']);
  });
});
