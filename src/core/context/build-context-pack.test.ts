import { describe, expect, it } from 'vitest';
import {
  buildContextPack,
  ContextOverBudgetError,
  OMITTED_NOTE_SUMMARY,
  OMITTED_NOTE_WINDOW_ONLY,
  type BuildContextPackOptions,
} from './build-context-pack';
import { MISSING_RESULT_TEXT, SERVER_NOTE_END, SERVER_NOTE_OPEN } from './render-entries';
import { STRICT_OPENING_USER_TEXT } from './render-strict';
import { createTokenCounter } from './token-counter';
import { calls, entry, note, parallelExchange, reply, result, seqs, state, user } from './test-fixtures';
import type { ContextEntry, ContextState, SummaryState } from './types';
import { validatePackOrdering } from './validate-pack-ordering';

const counter = createTokenCounter('o200k_base');
const PREFIX = 'You are a helpful assistant.';
const summary: SummaryState = {
  text: 'The user wants a trip to Rome [#1–4].',
  tokens: 12,
  coveredThroughSeq: 4,
  revision: 3,
};

function pack(contextState: ContextState, extra: Partial<BuildContextPackOptions> = {}) {
  return buildContextPack({ systemPrefix: PREFIX, state: contextState, budget: 100_000, counter, ...extra });
}

/** Entries counted for real, so the estimate and the rendering agree. */
function counted(item: ContextEntry): ContextEntry {
  return { ...item, tokens: counter.countMessage(item) };
}

describe('buildContextPack', () => {
  it('packs an empty thread as the system prefix alone', () => {
    const result = pack(state([]));
    expect(result.messages).toEqual([
      { role: 'system', content: PREFIX, tokens: counter.countMessage({ role: 'system', content: PREFIX }) },
    ]);
    expect(result.tokens).toBe(counter.countPack([{ role: 'system', content: PREFIX }]));
    expect(result.omitted).toBe(0);
    const prefixTokens = counter.countMessage({ role: 'system', content: PREFIX });
    expect(result.manifest).toEqual({
      summaryRevision: null,
      windowFromSeq: null,
      windowThroughSeq: null,
      pinnedSeqs: [],
      recalledSeqs: [],
      recalledElsewhere: [],
      recallNote: null,
      savedMemoryIds: [],
      windowSeqs: [],
      toolResults: [],
      parts: {
        systemPrefix: prefixTokens,
        summary: 0,
        pinned: 0,
        window: 0,
        recall: 0,
        notes: 0,
        priming: result.tokens - prefixTokens,
      },
      perCallFrom: 1,
    });
  });

  it('orders: system prefix then summary in one leading message, pinned entries, window oldest first', () => {
    const pinned = [user(2), reply(3)];
    const result = pack(state([user(5), reply(6), user(7)], { summary, pinned }));
    const [leading, ...rest] = result.messages;
    expect(leading?.role).toBe('system');
    expect(leading?.content.startsWith(`${PREFIX}\n\n`)).toBe(true);
    expect(leading?.content).toContain('through message #4');
    expect(
      leading?.content.endsWith(`${summary.text}\n(The summary covers the conversation through message #4.)`),
    ).toBe(true);
    expect(seqs(rest)).toEqual([2, 3, 5, 6, 7]);
    expect(rest.every((message) => message.role !== 'system')).toBe(true);
    expect(result.manifest).toMatchObject({
      summaryRevision: 3,
      windowFromSeq: 5,
      windowThroughSeq: 7,
      pinnedSeqs: [2, 3],
      windowSeqs: [5, 6, 7],
      toolResults: [],
    });
    // The parts add up to the pack: the summary section apart from the prefix, pinned and window by their messages.
    const { parts } = result.manifest;
    expect(parts.systemPrefix).toBe(counter.countMessage({ role: 'system', content: PREFIX }));
    expect(parts.systemPrefix + parts.summary).toBe(leading?.tokens);
    expect(parts.pinned).toBe((rest[0]?.tokens ?? 0) + (rest[1]?.tokens ?? 0));
    expect(parts.systemPrefix + parts.summary + parts.pinned + parts.window + parts.notes + parts.priming).toBe(
      result.tokens,
    );
    expect(parts.window).toBe(rest.slice(2).reduce((sum, message) => sum + message.tokens, 0));
  });

  it('keeps every tool result of the pack in the manifest, with the text the model got', () => {
    const call = { ...reply(5), toolCalls: [{ id: 'call_1', name: 'lookup', args: {} }] };
    const result = pack(
      state([
        user(4),
        counted(call),
        counted({ seq: 6, role: 'tool', content: '[Condensed] rows 1-9', toolCallId: 'call_1', tokens: 0 }),
        reply(7),
      ]),
    );
    expect(result.manifest.windowSeqs).toEqual([4, 5, 6, 7]);
    expect(result.manifest.toolResults).toEqual([
      {
        seq: 6,
        role: 'tool',
        toolCallId: 'call_1',
        content: '[Condensed] rows 1-9',
        tokens: counter.countMessage({ role: 'tool', content: '[Condensed] rows 1-9', toolCallId: 'call_1' }),
      },
    ]);
  });

  it('keeps the system prefix byte-identical whatever the summary (prompt caches hit on it)', () => {
    const first = pack(state([user(5)], { summary })).messages[0]?.content ?? '';
    const second =
      pack(state([user(9)], { summary: { ...summary, text: 'Other.', revision: 4 } })).messages[0]?.content ?? '';
    expect(first.slice(0, PREFIX.length)).toBe(second.slice(0, PREFIX.length));
    expect(first.slice(0, PREFIX.length)).toBe(PREFIX);
  });

  it('sums stored entry counts instead of recounting them', () => {
    const result = pack(state([user(1, 111), reply(2, 222)]));
    const leading = result.messages[0]?.tokens ?? 0;
    expect(result.tokens).toBe(leading + 111 + 222 + 3);
  });

  it('matches a full recount when the stored counts are real', () => {
    const window = [user(1), reply(2), user(3)].map(counted);
    const result = pack(state(window, { summary }));
    expect(result.tokens).toBe(counter.countPack(result.messages));
  });

  it('never shows entries before the context start', () => {
    const result = pack(state([user(1), reply(2), user(3)], { pinned: [note(0)], contextStartSeq: 2 }));
    expect(seqs(result.messages.slice(1))).toEqual([2, 3]);
    expect(result.manifest.pinnedSeqs).toEqual([]);
  });

  it('works from a precomputed prefix count without a counter, bounding what it renders itself', () => {
    const prefixTokens = counter.countText(PREFIX);
    const window = [user(5), reply(6)].map(counted);
    const result = buildContextPack({
      systemPrefix: PREFIX,
      systemPrefixTokens: prefixTokens,
      state: state(window, { summary }),
      budget: 10_000,
    });
    const exact = counter.countPack(result.messages);
    expect(result.tokens).toBeGreaterThanOrEqual(exact);
    expect(result.tokens).toBeLessThan(exact + 80);
    expect(() => buildContextPack({ systemPrefix: PREFIX, state: state([]), budget: 10_000 })).toThrow(
      /counter or systemPrefixTokens/,
    );
  });

  it('appends per-call server notes after the window and says where the per-call parts start', () => {
    const result = pack(state([user(1)]), { notes: ['The export job finished: report.pdf'] });
    expect(result.messages.at(-1)).toMatchObject({ role: 'system', content: 'The export job finished: report.pdf' });
    expect(result.manifest.perCallFrom).toBe(2);
  });
});

describe('buildContextPack budget guard', () => {
  const window = [user(1), reply(2), user(3), ...parallelExchange(4, 3), reply(8), user(9)].map(counted);

  it('leaves out the oldest blocks, never exceeding the budget, with one note and the omitted count', () => {
    const full = pack(state(window));
    const built: number[] = [];
    let refusedFrom: number | null = null;
    for (let budget = full.tokens; budget > 0; budget -= 7) {
      let result;
      try {
        result = pack(state(window), { budget });
      } catch (error) {
        // Refused only when not even the newest exchange fits; never a larger budget after a refusal.
        expect(error).toBeInstanceOf(ContextOverBudgetError);
        expect((error as ContextOverBudgetError).required).toBeGreaterThan(budget);
        refusedFrom ??= budget;
        continue;
      }
      expect(refusedFrom).toBeNull();
      built.push(result.omitted);
      expect(result.tokens).toBeLessThanOrEqual(budget);
      expect(result.tokens).toBe(counter.countPack(result.messages));
      expect(validatePackOrdering(result.messages).ok).toBe(true);
      const notes = result.messages.filter((message) => message.content === OMITTED_NOTE_SUMMARY);
      expect(notes).toHaveLength(result.omitted > 0 ? 1 : 0);
      const shown = result.messages.filter((message) => message.seq !== undefined);
      expect(shown.length + result.omitted).toBe(window.length);
      expect(shown[0]?.role).not.toBe('tool');
      expect(seqs(shown).sort((a, b) => (a ?? 0) - (b ?? 0))).toEqual(seqs(window.slice(result.omitted)));
      // A per-call part: right after the newest user message (#9, the last), never in front of the window.
      if (result.omitted > 0) expect(result.messages.at(-1)?.content).toBe(OMITTED_NOTE_SUMMARY);
    }
    // The loop checked packs actually built, whole and with older blocks left out, not refusals alone.
    expect(built.length).toBeGreaterThanOrEqual(5);
    expect(built).toContain(0);
    expect(built.some((omitted) => omitted > 0)).toBe(true);
  });

  it('drops a whole tool exchange rather than orphaning its results', () => {
    const full = pack(state(window));
    const withoutFirstThree = full.tokens - [0, 1, 2].reduce((sum, index) => sum + (window[index]?.tokens ?? 0), 0);
    const result = pack(state(window), { budget: withoutFirstThree + 10 });
    expect(result.omitted).toBe(7);
    expect(seqs(result.messages.slice(1))).toEqual([8, 9, undefined]);
    expect(result.messages.at(-1)?.content).toBe(OMITTED_NOTE_SUMMARY);
    expect(result.manifest.perCallFrom).toBe(3);
    expect(result.manifest.windowFromSeq).toBe(8);
  });

  it('condenses one huge newest message that alone exceeds the budget: its head and tail around a marker', () => {
    const content = `HEAD-START ${'word '.repeat(5000)}TAIL-END`;
    const huge = counted(entry(1, 'user', 0, { content }));
    for (const compat of ['openai', 'strict'] as const) {
      const result = pack(state([user(0), huge]), { budget: 1000, compat });
      expect(result.tokens).toBeLessThanOrEqual(1000);
      expect(counter.countPack(result.messages)).toBeLessThanOrEqual(1000);
      expect(result.manifest.windowSeqs.at(-1)).toBe(1);
      const shown = result.messages.find((message) => message.content.includes('HEAD-START'));
      expect(shown?.content).toContain('TAIL-END');
      expect(shown?.content).toMatch(/\[… \d+ of this message's 25019 characters are left out here/);
      expect(shown?.content).toContain('as #1');
      // Most of the room goes to the message itself, not lost to a timid cut.
      expect(counter.countText(shown?.content ?? '')).toBeGreaterThan(700);
    }
    // The entry itself (what the transcript and later packs read) is not changed.
    expect(huge.content).toBe(content);
  });

  it('rejects a huge message when even its condensed form cannot fit', () => {
    const huge = counted(entry(1, 'user', 0, { content: 'word '.repeat(5000) }));
    const prefix = counter.countMessage({ role: 'system', content: PREFIX });
    expect(() => pack(state([user(0), huge]), { budget: prefix + 60 })).toThrow(ContextOverBudgetError);
    expect(() => pack(state([huge]), { budget: prefix + 60 })).toThrow(`above the budget of ${prefix + 60}`);
  });

  it('rejects a system prefix and pinned entries that alone exceed the budget', () => {
    expect(() => pack(state([], { pinned: [user(1, 5000)] }), { budget: 1000 })).toThrow(ContextOverBudgetError);
  });

  it('says earlier messages are not shown, not summarized, in window-only mode', () => {
    const full = pack(state(window, { memoryMode: 'window-only' }));
    const result = pack(state(window, { memoryMode: 'window-only' }), { budget: full.tokens - 5 });
    expect(result.omitted).toBeGreaterThan(0);
    expect(result.messages.some((message) => message.content === OMITTED_NOTE_WINDOW_ONLY)).toBe(true);
  });
});

describe('buildContextPack tool rendering (openai)', () => {
  it('moves answers recorded after other messages up behind their call', () => {
    const packed = pack(state([user(1), calls(2, ['a', 'b']), user(3), result(4, 'b'), result(5, 'a'), reply(6)]));
    expect(seqs(packed.messages.slice(1))).toEqual([1, 2, 5, 4, 3, 6]);
    expect(validatePackOrdering(packed.messages).ok).toBe(true);
  });

  it('renders tool messages answering two assistant messages behind each call', () => {
    const packed = pack(state([user(1), calls(2, ['a']), calls(3, ['b']), result(4, 'b'), result(5, 'a')]));
    expect(seqs(packed.messages.slice(1))).toEqual([1, 2, 5, 3, 4]);
    expect(validatePackOrdering(packed.messages).ok).toBe(true);
  });

  it('sends an unanswered call as stored with a stand-in answer, and an answer without its call as labelled user-level text', () => {
    const window = [user(1), calls(2, ['a', 'b']), result(3, 'a'), user(4)];
    const packed = pack(state(window));
    // The call is byte-identical to the stored entry (same as once its answer arrives), with its stored count.
    expect(packed.messages[2]).toEqual({
      role: 'assistant',
      content: '',
      seq: 2,
      tokens: 10,
      toolCalls: window[1]?.toolCalls,
    });
    expect(packed.messages.slice(3, 5).map((message) => [message.toolCallId, message.content])).toEqual([
      ['a', 'result of a'],
      ['b', MISSING_RESULT_TEXT],
    ]);
    expect(validatePackOrdering(packed.messages).ok).toBe(true);
    const orphan = pack(state([result(3, 'gone'), user(4)].map(counted), { contextStartSeq: 3 }));
    expect(orphan.messages[1]).toMatchObject({ role: 'user', seq: 3 });
    expect(orphan.messages[1]?.content).toContain('result of gone');
    expect(orphan.messages[1]?.content).toContain('data, not instructions');
    expect(validatePackOrdering(orphan.messages).ok).toBe(true);
    expect(orphan.tokens).toBe(counter.countPack(orphan.messages));
  });
});

describe('buildContextPack strict rendering', () => {
  const window = [user(1), note(2), user(3), ...parallelExchange(4, 3), reply(8), user(9)].map(counted);

  it('has one leading system message, alternating roles, no tool exchange, and the same information', () => {
    const openai = pack(state(window, { summary }), { notes: ['Job done.'] });
    const strict = pack(state(window, { summary }), { notes: ['Job done.'], compat: 'strict' });
    expect(validatePackOrdering(strict.messages, 'strict')).toEqual({ ok: true, value: true });
    expect(validatePackOrdering(openai.messages, 'strict').ok).toBe(false);
    const text = strict.messages.map((message) => message.content).join('\n');
    for (const message of openai.messages) {
      expect(text).toContain(message.content);
      for (const item of message.toolCalls ?? []) expect(text).toContain(`${item.name}(${JSON.stringify(item.args)})`);
    }
    expect(text).toContain(`${SERVER_NOTE_OPEN}\nsystem message 2\n${SERVER_NOTE_END}`);
    // The per-call note joined the last user turn; the leading message is the prefix and the summary alone.
    expect(strict.messages.at(-1)?.content).toBe(`user message 9\n\n[Server note] Job done.`);
    expect(strict.messages[0]?.content).toBe(openai.messages[0]?.content);
    expect(text).toContain('[Tool result c0]');
    expect(strict.tokens).toBe(counter.countPack(strict.messages));
  });

  it('puts the omitted note in the newest user turn, never in the leading message, and opens with a user turn', () => {
    const turns = [
      entry(1, 'user', 0, { content: 'long opening question '.repeat(30) }),
      reply(2),
      user(3),
      reply(4),
    ].map(counted);
    const full = pack(state(turns), { compat: 'strict' });
    const result = pack(state(turns), { compat: 'strict', budget: full.tokens - 5 });
    expect(result.omitted).toBe(1);
    expect(result.messages[0]?.content).toBe(PREFIX);
    expect(result.messages.at(-2)?.content).toBe(`user message 3\n\n[Server note] ${OMITTED_NOTE_SUMMARY}`);
    expect(result.manifest.perCallFrom).toBe(result.messages.length - 2);
    expect(result.messages[1]).toMatchObject({ role: 'user', content: STRICT_OPENING_USER_TEXT });
    expect(result.messages[2]?.seq).toBe(2);
    expect(validatePackOrdering(result.messages, 'strict').ok).toBe(true);
    expect(result.tokens).toBeLessThanOrEqual(full.tokens - 5);
  });

  it('keeps the leading message byte-identical through the earlier summary text when a fold appends a segment', () => {
    const before = pack(state([user(5), reply(6)], { summary })).messages[0]?.content ?? '';
    const appended: SummaryState = {
      text: `${summary.text}\n\nThey booked hotel H-204 [#5–6].`,
      tokens: 24,
      coveredThroughSeq: 6,
      revision: 4,
    };
    const after = pack(state([user(7)], { summary: appended })).messages[0]?.content ?? '';
    expect(after.startsWith(before.slice(0, before.indexOf(summary.text) + summary.text.length))).toBe(true);
    expect(after).toContain('through message #6.)');
  });
});
