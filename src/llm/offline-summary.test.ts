import { describe, expect, it } from 'vitest';
import { DEFAULT_SEGMENT_PROMPT, renderSummaryPrompt } from '../core/context/summary-prompt.js';
import type { ContextEntry, PackMessage } from '../core/context/types.js';
import { consolidateSummaryMessages, retentionRetryMessages } from '../core/summary/revision-prompts.js';
import { countTextTokens } from './count-chat-tokens.js';
import { OfflineChatModel } from './offline-chat-model.js';
import { NOTHING_TO_KEEP } from './offline-summary.js';
import { streamChat } from './stream-chat.js';

const summarizer = new OfflineChatModel({ mode: 'summarizer' });
const summarize = async (messages: { role: 'system' | 'user'; content: string }[]) =>
  (
    await streamChat({
      model: summarizer,
      messages: messages.map((message): PackMessage => ({ ...message, tokens: 0 })),
    })
  ).text;

/** What the offline chat model answers: a restatement with its bookkeeping. */
const offlineAnswer = (said: string, count: number) =>
  `[offline model] You said: "${said}". My context: ${count} messages (1 system, ${count / 2} user, ${count / 2 - 1} assistant, 0 tool), ${count * 47} tokens, including a summary of earlier messages. The summary keeps #5, LX, #13.`;

function planningChat(): ContextEntry[] {
  const said = [
    'Hi there!',
    'The budget is 18,000 EUR for everything, travel excluded.',
    'Our venue shortlist is Quinta da Serra, Casa do Lago and Hotel Miramar.',
    'Can you suggest a few icebreaker activities?',
    'We booked Sabores do Tejo as the caterer, with vegetarian options.',
  ];
  return said.flatMap((content, index): ContextEntry[] => [
    { seq: index * 2 + 1, role: 'user', content, tokens: 0 },
    { seq: index * 2 + 2, role: 'assistant', content: offlineAnswer(content, (index + 1) * 2), tokens: 0 },
  ]);
}

/** Bullets only, each at least four words and none of the offline model's bookkeeping. */
function expectReadable(summary: string): string[] {
  const lines = summary.split('\n');
  for (const line of lines) {
    expect(line, line).toMatch(/^- \S/);
    expect(line.replace(/\s*\[#\d+\]$/, '').split(/\s+/).length - 1, line).toBeGreaterThanOrEqual(4);
    expect(line, line).not.toMatch(/tokens|My context|\[offline model\]|^- #?\d+$|:$/);
  }
  return lines;
}

describe('the offline summarizer reads what people wrote', () => {
  it("writes a segment of the user's sentences with their seqs, never the offline answers' bookkeeping", async () => {
    const entries = planningChat();
    const summary = await summarize(
      renderSummaryPrompt({
        previousSummary: '- The team offsite is in Lisbon. [#0]',
        entries,
        maxTokens: 200,
        fromSeq: 1,
        throughSeq: 10,
        template: DEFAULT_SEGMENT_PROMPT,
      }),
    );
    expect(expectReadable(summary)).toEqual([
      '- The budget is 18,000 EUR for everything, travel excluded. [#3]',
      '- Our venue shortlist is Quinta da Serra, Casa do Lago and Hotel Miramar. [#5]',
      '- We booked Sabores do Tejo as the caterer, with vegetarian options. [#9]',
    ]);
  });

  it('keeps the highest-scoring sentences within a small cap: names, amounts and decisions before questions', async () => {
    const summary = await summarize(
      renderSummaryPrompt({
        previousSummary: null,
        entries: planningChat(),
        maxTokens: 45,
        fromSeq: 1,
        throughSeq: 10,
        template: DEFAULT_SEGMENT_PROMPT,
      }),
    );
    expect(countTextTokens(summary)).toBeLessThanOrEqual(45);
    expect(expectReadable(summary).length).toBe(2);
    expect(summary).toContain('Quinta da Serra');
    expect(summary).not.toContain('icebreaker');
  });

  it("answers the identifier re-ask with the summary's sentences, not the listed identifiers or the instructions", async () => {
    const segment = [
      '- The budget is 18,000 EUR for everything, travel excluded. [#3]',
      '- Our venue shortlist is Quinta da Serra, Casa do Lago and Hotel Miramar. [#5]',
    ].join('\n');
    const summary = await summarize(
      retentionRetryMessages({
        summary: segment,
        missing: ['632 tokens', '#13', '000', 'Casa do Lago'],
        maxTokens: 100,
      }),
    );
    expect(summary).toBe(segment);
  });

  it("consolidates segments, an earlier version's bookkeeping bullets dropped", async () => {
    const segments = [
      'Summary (offline model, extractive):',
      '- user: The budget is 18,000 EUR for everything, travel excluded.',
      '- assistant: [offline model] You said: "hi". My context: 13 messages (1 system, 6 user, 6 assistant, 0 tool), 632 tokens,',
      '- 000',
      '- 86 tokens',
      'Summary (offline model, extractive):',
      '- We booked Sabores do Tejo as the caterer, with vegetarian options. [#9]',
    ].join('\n');
    const summary = await summarize(consolidateSummaryMessages({ summary: segments, maxTokens: 80 }));
    expect(expectReadable(summary)).toEqual([
      '- The budget is 18,000 EUR for everything, travel excluded.',
      '- We booked Sabores do Tejo as the caterer, with vegetarian options. [#9]',
    ]);
  });

  it('says so when the messages hold nothing to keep', async () => {
    const summary = await summarize(
      renderSummaryPrompt({
        previousSummary: null,
        entries: [
          { seq: 1, role: 'user', content: 'hi', tokens: 0 },
          { seq: 2, role: 'assistant', content: offlineAnswer('hi', 2), tokens: 0 },
        ],
        maxTokens: 100,
        fromSeq: 1,
        throughSeq: 2,
        template: DEFAULT_SEGMENT_PROMPT,
      }),
    );
    expect(summary).toBe(`- ${NOTHING_TO_KEEP}`);
  });
});
