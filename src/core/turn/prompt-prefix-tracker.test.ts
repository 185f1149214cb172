import { describe, expect, it } from 'vitest';
import type { PackMessage } from '../context';
import { PromptPrefixTracker } from './prompt-prefix-tracker';

const message = (role: PackMessage['role'], content: string, tokens = 10): PackMessage => ({ role, content, tokens });

describe('PromptPrefixTracker', () => {
  it('says where a thread\'s prompt first differs from its previous one, and the tokens before it', () => {
    const tracker = new PromptPrefixTracker();
    const tools = [{ type: 'function', function: { name: 'calculator' } }];
    const first = [message('system', 'prefix', 50), message('user', 'hi'), message('user', 'recall A', 30)];
    expect(tracker.observe({ threadId: 't', messages: first, tools, toolSchemaTokens: 20 })).toBeNull();
    const second = [message('system', 'prefix', 50), message('user', 'hi'), message('assistant', 'hello'), message('user', 'recall B', 30), message('user', 'next')];
    expect(tracker.observe({ threadId: 't', messages: second, tools, toolSchemaTokens: 20 })).toEqual({ messageIndex: 2, tokensBefore: 80 });
    // The previous prompt entirely a prefix: the first difference is where the new messages start.
    expect(tracker.observe({ threadId: 't', messages: [...second, message('assistant', 'more')], tools, toolSchemaTokens: 20 })).toEqual({ messageIndex: 5, tokensBefore: 130 });
    // Other tool schemas come before every message: nothing is reusable.
    expect(tracker.observe({ threadId: 't', messages: second, tools: [], toolSchemaTokens: 0 })).toEqual({ messageIndex: -1, tokensBefore: 0 });
    // Threads are apart.
    expect(tracker.observe({ threadId: 'other', messages: second, tools, toolSchemaTokens: 20 })).toBeNull();
  });

  it('forgets the oldest thread past its bound', () => {
    const tracker = new PromptPrefixTracker(2);
    const messages = [message('system', 'p')];
    for (const threadId of ['a', 'b', 'c']) tracker.observe({ threadId, messages, tools: [], toolSchemaTokens: 0 });
    expect(tracker.observe({ threadId: 'a', messages, tools: [], toolSchemaTokens: 0 })).toBeNull();
    expect(tracker.observe({ threadId: 'c', messages, tools: [], toolSchemaTokens: 0 })).toEqual({ messageIndex: 1, tokensBefore: 10 });
  });
});
