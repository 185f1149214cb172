import type { PackMessage } from '../context';

/** Characters of the first message and of its answer a title prompt quotes at most (a title needs the gist). */
const QUOTED_CHARS = 1500;

function quoted(text: string): string {
  return text.length > QUOTED_CHARS ? `${text.slice(0, QUOTED_CHARS)} […]` : text;
}

/** The title call's system message. */
export const TITLE_SYSTEM_PROMPT =
  'You name chat conversations. Answer with a title of three to six words that says what the conversation is about, ' +
  'in the language of the user. Only the title: no quotes, no "Title:", no punctuation at the end.';

/** The summarizer's prompt for a chat's title: the first message and (when there is one) the answer to it. */
export function titlePromptMessages(input: { userText: string; answerText: string | null }): PackMessage[] {
  const exchange = [
    `User: ${quoted(input.userText)}`,
    ...(input.answerText ? [`Assistant: ${quoted(input.answerText)}`] : []),
  ].join('\n\n');
  return [
    { role: 'system', content: TITLE_SYSTEM_PROMPT, tokens: 0 },
    { role: 'user', content: `The conversation starts:\n\n${exchange}\n\nIts title:`, tokens: 0 },
  ];
}
