import { describe, expect, it } from 'vitest';
import { DEFAULT_SEGMENT_PROMPT, type ContextEntry, type PackMessage } from '../context';
import { entry, user, reply } from '../context/test-fixtures';
import { continuedFoldMessages, FOLD_TASK_OPENING, openingOf } from './continued-fold-prompt';
import type { ChatPrefix } from '../context/types';

const system: PackMessage = {
  role: 'system',
  content: 'You are helpful.\n\n## Summary of the conversation so far\nSegment one.',
  tokens: 20,
};
const asMessage = (item: ContextEntry): PackMessage => ({
  role: item.role,
  content: item.content,
  seq: item.seq,
  tokens: item.tokens,
  ...(item.toolCalls ? { toolCalls: item.toolCalls } : {}),
});
const tool = {
  type: 'function' as const,
  function: { name: 'search_transcript', description: 'search', parameters: { type: 'object', properties: {} } },
};

function prefixOf(entries: ContextEntry[], extra: PackMessage[] = []): ChatPrefix {
  return { messages: [system, ...entries.map(asMessage), ...extra], tools: [tool], tokens: 500 };
}

const measure = () => 50;
const window = [user(5), reply(6), user(7), reply(8), user(9), reply(10)];

describe('continuedFoldMessages', () => {
  it('keeps the chat prefix byte for byte and adds one task naming each folded message by seq and opening', () => {
    const prefix = prefixOf(window);
    const messages = continuedFoldMessages({
      prefix,
      folded: window.slice(0, 4),
      template: DEFAULT_SEGMENT_PROMPT,
      fromSeq: 1,
      maxTokens: 300,
      earlierSummary: true,
      measure,
    });
    expect(messages?.slice(0, -1)).toEqual(prefix.messages);
    const task = messages?.at(-1);
    expect(task?.role).toBe('user');
    expect(task?.content.startsWith(FOLD_TASK_OPENING)).toBe(true);
    expect(task?.content).toContain('The messages to fold (#5 to #8)');
    expect(task?.content).toContain('#5 user: «user message 5»');
    expect(task?.content).toContain('#8 assistant: «assistant message 8»');
    expect(task?.content).not.toContain('#9 ');
    // The template's placeholders are filled: citations from the context start through the last folded message.
    expect(task?.content).toContain('from #1 to #8');
    expect(task?.content).toContain('at most 300 tokens');
    expect(task?.tokens).toBe(50);
    expect(task?.content).toContain('The summary in the system message above is the earlier summary');
  });

  it('cuts after the newest plain answer: a user message whose turn runs, or pending tool calls, stay out', () => {
    const running: PackMessage = { role: 'user', content: 'a question being answered', seq: 11, tokens: 5 };
    const messages = continuedFoldMessages({
      prefix: prefixOf(window, [running]),
      folded: window.slice(0, 2),
      template: DEFAULT_SEGMENT_PROMPT,
      fromSeq: 1,
      maxTokens: 300,
      earlierSummary: true,
      measure,
    });
    expect(messages?.at(-2)).toMatchObject({ role: 'assistant', seq: 10 });
    const calling = entry(11, 'assistant', 10, { content: '', toolCalls: [{ id: 'c1', name: 'lookup', args: {} }] });
    const withCall = continuedFoldMessages({
      prefix: prefixOf([...window, calling]),
      folded: window.slice(0, 2),
      template: DEFAULT_SEGMENT_PROMPT,
      fromSeq: 1,
      maxTokens: 300,
      earlierSummary: true,
      measure,
    });
    expect(withCall?.at(-2)).toMatchObject({ role: 'assistant', seq: 10 });
  });

  it('is null when the prefix does not hold every folded message', () => {
    // The budget guard left #5 and #6 out of the chat's pack.
    const partial = prefixOf(window.slice(2));
    expect(
      continuedFoldMessages({
        prefix: partial,
        folded: window.slice(0, 4),
        template: DEFAULT_SEGMENT_PROMPT,
        fromSeq: 1,
        maxTokens: 300,
        earlierSummary: true,
        measure,
      }),
    ).toBeNull();
    // A folded message after the newest answer.
    const unanswered = prefixOf([...window, user(11)]);
    expect(
      continuedFoldMessages({
        prefix: unanswered,
        folded: [...window, user(11)],
        template: DEFAULT_SEGMENT_PROMPT,
        fromSeq: 1,
        maxTokens: 300,
        earlierSummary: true,
        measure,
      }),
    ).toBeNull();
    expect(
      continuedFoldMessages({
        prefix: prefixOf([user(5)]),
        folded: [user(5)],
        template: DEFAULT_SEGMENT_PROMPT,
        fromSeq: 1,
        maxTokens: 300,
        earlierSummary: true,
        measure,
      }),
    ).toBeNull();
    expect(
      continuedFoldMessages({
        prefix: prefixOf(window),
        folded: [],
        template: DEFAULT_SEGMENT_PROMPT,
        fromSeq: 1,
        maxTokens: 300,
        earlierSummary: true,
        measure,
      }),
    ).toBeNull();
  });

  it('numbers a long fold by landmarks: the first, the last, every tenth and wherever a number skips', () => {
    // #1 to #30 with #17 pinned elsewhere (not in the window).
    const entries = Array.from({ length: 30 }, (_, index) =>
      index % 2 === 0 ? user(index + 1) : reply(index + 1),
    ).filter((item) => item.seq !== 17);
    const folded = entries.slice(0, 25);
    const messages = continuedFoldMessages({
      prefix: prefixOf(entries),
      folded,
      template: DEFAULT_SEGMENT_PROMPT,
      fromSeq: 1,
      maxTokens: 300,
      earlierSummary: true,
      measure,
    });
    const listed = [...(messages?.at(-1)?.content ?? '').matchAll(/^#(\d+) /gm)].map((match) => Number(match[1]));
    // Index 0, 10 (#11), 16 (#18: after the skip), 20 (#22), 24 (the last, #26).
    expect(listed).toEqual([1, 11, 18, 22, 26]);
    expect(messages?.at(-1)?.content).toContain('are the oldest 25 of the conversation above');
  });

  it("applies a thread's own summary prompt to the segment", () => {
    const template = {
      ...DEFAULT_SEGMENT_PROMPT,
      system: 'Summarize in French, at most {{maxTokens}} tokens.\nAfter {{previousSummary}}: {{transcript}}',
    };
    const messages = continuedFoldMessages({
      prefix: prefixOf(window),
      folded: window.slice(0, 2),
      template,
      fromSeq: 1,
      maxTokens: 120,
      earlierSummary: false,
      measure,
    });
    expect(messages?.at(-1)?.content).toContain(
      'Summarize in French, at most 120 tokens.\nAfter (none yet): (messages #5 to #6 of the conversation above)',
    );
    expect(messages?.at(-1)?.content).not.toContain('You maintain the running summary');
    // No summary yet: the task points at none.
    expect(messages?.at(-1)?.content).not.toContain('earlier summary');
  });

  it('quotes openings with whitespace collapsed, and names the tools an answer called', () => {
    expect(openingOf('  two\n\nlines  ')).toBe('two lines');
    expect(openingOf('x'.repeat(80))).toBe(`${'x'.repeat(48)}…`);
    const calling = entry(6, 'assistant', 10, {
      content: 'Looking it up.',
      toolCalls: [{ id: 'c1', name: 'lookup', args: {} }],
    });
    const result = entry(7, 'tool', 10, { content: 'found 3 rows', toolCallId: 'c1' });
    const entries = [calling, result, reply(8)];
    const messages = continuedFoldMessages({
      prefix: prefixOf(entries),
      folded: entries.slice(0, 2),
      template: DEFAULT_SEGMENT_PROMPT,
      fromSeq: 1,
      maxTokens: 300,
      earlierSummary: true,
      measure,
    });
    expect(messages?.at(-1)?.content).toContain('#6 assistant: «Looking it up.» (called lookup)');
    expect(messages?.at(-1)?.content).toContain('#7 tool result: «found 3 rows»');
  });
});
