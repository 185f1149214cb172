import { describe, expect, it } from 'vitest';
import { isAuxiliaryRequest } from './answer-auxiliary';
import type { ClientMessage } from './client-view';

const user = (content: string): ClientMessage => ({ role: 'user', content });
const TITLE =
  '### Task:\nGenerate a concise, 3-5 word title with an emoji summarizing the chat history.\n### Chat History:\n<chat_history>\nUSER: hi\nASSISTANT: hello\n</chat_history>';

describe('isAuxiliaryRequest', () => {
  it('recognises one user message beginning with a prefix (leading white space aside)', () => {
    expect(isAuxiliaryRequest([user(TITLE)], ['### Task:'])).toBe(true);
    expect(isAuxiliaryRequest([user(`\n  ${TITLE}`)], ['### Task:'])).toBe(true);
    expect(isAuxiliaryRequest([user('Write a title: hi')], ['### Task:', 'Write a title:'])).toBe(true);
  });

  it('leaves conversations alone: more messages, another prefix, a prefix inside the text, no prefixes', () => {
    expect(
      isAuxiliaryRequest(
        [user('hello'), { role: 'assistant', content: 'hi', toolCalls: [] }, user(TITLE)],
        ['### Task:'],
      ),
    ).toBe(false);
    expect(isAuxiliaryRequest([user('Please read: ### Task: something')], ['### Task:'])).toBe(false);
    expect(isAuxiliaryRequest([user('### task: lower case')], ['### Task:'])).toBe(false);
    expect(isAuxiliaryRequest([user(TITLE)], [])).toBe(false);
    expect(isAuxiliaryRequest([user(TITLE)], [''])).toBe(false);
  });
});
