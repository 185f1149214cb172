import { describe, expect, it } from 'vitest';
import { publishedPromptTokens } from './published-token-count';

// OpenAI cookbook, "How to count tokens with tiktoken": these messages, and the prompt_tokens the API reported.
const COOKBOOK_MESSAGES = [
  {
    role: 'system',
    content: 'You are a helpful, pattern-following assistant that translates corporate jargon into plain English.',
  },
  { role: 'system', name: 'example_user', content: 'New synergies will help drive top-line growth.' },
  { role: 'system', name: 'example_assistant', content: 'Things working well together will increase revenue.' },
  {
    role: 'system',
    name: 'example_user',
    content: "Let's circle back when we have more bandwidth to touch base on opportunities for increased leverage.",
  },
  {
    role: 'system',
    name: 'example_assistant',
    content: "Let's talk later when we're less busy about how to do better.",
  },
  { role: 'user', content: "This late pivot means we don't have time to boil the ocean for the client deliverable." },
];

describe('the stub counts prompt tokens by the published rules', () => {
  it('agrees with the counts the cookbook got from the API', () => {
    expect(publishedPromptTokens({ model: 'gpt-4o-mini', messages: COOKBOOK_MESSAGES })).toBe(124);
    expect(publishedPromptTokens({ model: 'gpt-4o', messages: COOKBOOK_MESSAGES })).toBe(124);
    expect(publishedPromptTokens({ model: 'gpt-4-0613', messages: COOKBOOK_MESSAGES })).toBe(129);
    expect(publishedPromptTokens({ model: 'gpt-3.5-turbo', messages: COOKBOOK_MESSAGES })).toBe(129);
  }, 60_000);

  it('counts a message as 3 + its role + its content, plus 3 for the reply', () => {
    // "Hello" is one token and "user" one token in both encodings.
    expect(publishedPromptTokens({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hello' }] })).toBe(
      3 + 1 + 1 + 3,
    );
  });
});
