import { formatTokens } from '../components/UsageMeter';
import { Conversation } from '../conversation';

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
});
