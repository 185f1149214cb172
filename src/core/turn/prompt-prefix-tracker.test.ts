import { describe, expect, it } from 'vitest';
import type { PackMessage } from '../context';
import { PromptPrefixTracker, promptFingerprints } from './prompt-prefix-tracker';

const message = (role: PackMessage['role'], content: string, tokens = 10): PackMessage => ({ role, content, tokens });

describe('PromptPrefixTracker', () => {
  it("says where a thread's prompt first differs from its previous one, and the tokens before it", () => {
    const tracker = new PromptPrefixTracker();
    const tools = [{ type: 'function', function: { name: 'calculator' } }];
    const first = [message('system', 'prefix', 50), message('user', 'hi'), message('user', 'recall A', 30)];
    expect(tracker.observe({ threadId: 't', messages: first, tools, toolSchemaTokens: 20 }).divergence).toBeNull();
    const second = [
      message('system', 'prefix', 50),
      message('user', 'hi'),
      message('assistant', 'hello'),
      message('user', 'recall B', 30),
      message('user', 'next'),
    ];
    expect(tracker.observe({ threadId: 't', messages: second, tools, toolSchemaTokens: 20 }).divergence).toEqual({
      messageIndex: 2,
      tokensBefore: 80,
    });
    // The previous prompt entirely a prefix: the first difference is where the new messages start.
    expect(
      tracker.observe({
        threadId: 't',
        messages: [...second, message('assistant', 'more')],
        tools,
        toolSchemaTokens: 20,
      }).divergence,
    ).toEqual({ messageIndex: 5, tokensBefore: 130 });
    // Other tool schemas come before every message: nothing is reusable.
    expect(tracker.observe({ threadId: 't', messages: second, tools: [], toolSchemaTokens: 0 }).divergence).toEqual({
      messageIndex: -1,
      tokensBefore: 0,
    });
    // Threads are apart.
    expect(tracker.observe({ threadId: 'other', messages: second, tools, toolSchemaTokens: 20 }).divergence).toBeNull();
  });

  it('forgets the oldest thread past its bound', () => {
    const tracker = new PromptPrefixTracker(2);
    const messages = [message('system', 'p')];
    for (const threadId of ['a', 'b', 'c']) tracker.observe({ threadId, messages, tools: [], toolSchemaTokens: 0 });
    expect(tracker.observe({ threadId: 'a', messages, tools: [], toolSchemaTokens: 0 }).divergence).toBeNull();
    expect(tracker.observe({ threadId: 'c', messages, tools: [], toolSchemaTokens: 0 }).divergence).toEqual({
      messageIndex: 1,
      tokensBefore: 10,
    });
  });

  it('compares a thread it has not seen with the fingerprints stored with its newest call (another process, a restart)', () => {
    const tools = [{ type: 'function', function: { name: 'calculator' } }];
    const earlier = [message('system', 'prefix', 50), message('user', 'hi'), message('assistant', 'hello')];
    const stored = promptFingerprints(earlier, tools);
    // What a Postgres integer[] gives back: signed 32-bit values.
    expect(stored.messages.every((value) => Number.isInteger(value) && value >= -(2 ** 31) && value < 2 ** 31)).toBe(
      true,
    );
    const next = [...earlier, message('user', 'again')];
    const elsewhere = new PromptPrefixTracker();
    const observed = elsewhere.observe({ threadId: 't', messages: next, tools, toolSchemaTokens: 20, stored });
    expect(observed.divergence).toEqual({ messageIndex: 3, tokensBefore: 90 });
    expect(observed.fingerprints).toEqual(promptFingerprints(next, tools));
    // Once seen here, this process' own memory wins over what is stored.
    expect(
      elsewhere.observe({
        threadId: 't',
        messages: [...next, message('assistant', 'ok')],
        tools,
        toolSchemaTokens: 20,
        stored,
      }).divergence,
    ).toEqual({ messageIndex: 4, tokensBefore: 100 });
  });
});
