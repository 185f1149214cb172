import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { applyFold } from './apply-fold';
import { buildContextPack, ContextOverBudgetError } from './build-context-pack';
import { buildSummarizerInputs } from './build-summarizer-inputs';
import { expandPinToExchange } from './expand-pin-to-exchange';
import { filterCitations } from './filter-citations';
import { getModelProfile } from './model-profile';
import { planFold } from './plan-fold';
import type { KeepPolicy, TriggerPolicy } from './policies';
import { shouldFold } from './should-fold';
import { calls, entry, result } from './test-fixtures';
import type { ContextEntry, ContextState } from './types';
import { validatePackOrdering } from './validate-pack-ordering';

// A conversation is made of pieces: plain messages, tool exchanges with 1-10 parallel calls answered in any order
// (optionally with a user message recorded before the answers), two assistant messages whose results come as one
// block, and calls never answered.
/** Of the 300 generated cases, at least this many build a pack, and this many of those leave messages out. */
const MIN_BUILT = 150;
const MIN_OMITTING = 5;

type Piece =
  | { kind: 'user' | 'reply' | 'note' | 'unanswered'; tokens: number }
  | { kind: 'exchange'; order: number[]; interleave: boolean; tokens: number }
  | { kind: 'double'; tokens: number };

const tokens = fc.integer({ min: 1, max: 400 });
const piece: fc.Arbitrary<Piece> = fc.oneof(
  fc.record({
    kind: fc.constantFrom('user' as const, 'reply' as const, 'note' as const, 'unanswered' as const),
    tokens,
  }),
  fc.record({
    kind: fc.constant('exchange' as const),
    order: fc.integer({ min: 1, max: 10 }).chain((count) => {
      const ids = Array.from({ length: count }, (_, index) => index);
      return fc.shuffledSubarray(ids, { minLength: count, maxLength: count });
    }),
    interleave: fc.boolean(),
    tokens,
  }),
  fc.record({ kind: fc.constant('double' as const), tokens }),
);

/** Turns pieces into entries with consecutive seqs from `firstSeq`; a conversation starts with a user message. */
function build(pieces: readonly Piece[], firstSeq = 1): ContextEntry[] {
  const entries: ContextEntry[] = [];
  const next = (): number => firstSeq + entries.length;
  for (const item of pieces) {
    const tag = `s${next()}-`;
    if (item.kind === 'user' || item.kind === 'reply' || item.kind === 'note') {
      entries.push(
        entry(next(), item.kind === 'reply' ? 'assistant' : item.kind === 'note' ? 'system' : 'user', item.tokens),
      );
    } else if (item.kind === 'unanswered') {
      entries.push(calls(next(), [`${tag}x`], item.tokens));
    } else if (item.kind === 'exchange') {
      entries.push(
        calls(
          next(),
          item.order.map((index) => `${tag}${index}`),
          item.tokens,
        ),
      );
      if (item.interleave) entries.push(entry(next(), 'user', item.tokens));
      for (const index of item.order) entries.push(result(next(), `${tag}${index}`, item.tokens));
    } else {
      entries.push(calls(next(), [`${tag}a`], item.tokens));
      entries.push(calls(next(), [`${tag}b`], item.tokens));
      entries.push(result(next(), `${tag}b`, item.tokens));
      entries.push(result(next(), `${tag}a`, item.tokens));
    }
  }
  return entries;
}

const conversation = fc
  .array(piece, { maxLength: 25 })
  .map((pieces) => build([{ kind: 'user', tokens: 5 }, ...pieces]));
const keepPolicy: fc.Arbitrary<KeepPolicy> = fc.oneof(
  fc.record({ kind: fc.constant('messages' as const), value: fc.integer({ min: 1, max: 15 }) }),
  fc.record({ kind: fc.constant('tokens' as const), value: fc.integer({ min: 1, max: 3000 }) }),
);
const profile = getModelProfile('gpt-4o');

/** Every answered call is on the same side of the cut as its answer. */
function exchangesIntact(folded: readonly ContextEntry[], kept: readonly ContextEntry[]): boolean {
  const side = new Map<string, string>();
  for (const [name, list] of [
    ['folded', folded],
    ['kept', kept],
  ] as const) {
    for (const item of list) {
      for (const call of item.toolCalls ?? []) side.set(`call:${call.id}`, name);
      if (item.toolCallId) side.set(`result:${item.toolCallId}`, name);
    }
  }
  return [...side].every(([key, name]) => !key.startsWith('result:') || side.get(`call:${key.slice(7)}`) === name);
}

describe('invariants (fast-check)', () => {
  it('planFold partitions the window without splitting an exchange or starting the kept window with a tool message', () => {
    fc.assert(
      fc.property(conversation, keepPolicy, (window, keep) => {
        expect(new Set(window.map((item) => item.seq)).size).toBe(window.length);
        const plan = planFold({ window, keep });
        const all = [...plan.folded, ...plan.kept].map((item) => item.seq).sort((a, b) => a - b);
        expect(all).toEqual(window.map((item) => item.seq));
        expect(plan.kept.length).toBeGreaterThan(0);
        expect(plan.kept[0]?.role).not.toBe('tool');
        expect(exchangesIntact(plan.folded, plan.kept)).toBe(true);
        const size = keep.kind === 'messages' ? window.length : window.reduce((sum, item) => sum + item.tokens, 0);
        if (size <= keep.value) expect(plan.folded).toEqual([]);
      }),
    );
  });

  it('no entry is lost or duplicated between summary, pinned and window after any sequence of turns, pins and folds', () => {
    const step = fc.oneof(
      fc.record({ action: fc.constant('add' as const), pieces: fc.array(piece, { minLength: 1, maxLength: 4 }) }),
      fc.record({ action: fc.constant('pin' as const), pick: fc.nat() }),
      fc.record({ action: fc.constant('fold' as const) }),
    );
    const trigger: TriggerPolicy = {
      conditions: [
        { kind: 'tokens', value: 2000 },
        { kind: 'messages', value: 20 },
      ],
    };
    fc.assert(
      fc.property(fc.array(step, { maxLength: 30 }), keepPolicy, (steps, keep) => {
        let current: ContextState = {
          summary: null,
          window: build([{ kind: 'user', tokens: 5 }]),
          pinned: [],
          contextStartSeq: 1,
          memoryMode: 'summary',
        };
        let seen = current.window.map((item) => item.seq);
        const summarized = new Set<number>();
        for (const next of steps) {
          if (next.action === 'add') {
            const added = build([{ kind: 'user', tokens: 5 }, ...next.pieces], (seen.at(-1) ?? 0) + 1);
            current = { ...current, window: [...current.window, ...added] };
            seen = [...seen, ...added.map((item) => item.seq)];
          } else if (next.action === 'pin' && current.window.length > 0) {
            const target = current.window[next.pick % current.window.length];
            const pinSeqs = new Set(target ? expandPinToExchange(current.window, target.seq) : []);
            current = {
              ...current,
              window: current.window.filter((item) => !pinSeqs.has(item.seq)),
              pinned: [
                ...current.pinned,
                ...current.window.filter((item) => pinSeqs.has(item.seq)).map((item) => ({ ...item, pinned: true })),
              ].sort((a, b) => a.seq - b.seq),
            };
          } else if (shouldFold(current, trigger, profile).fold) {
            const plan = planFold({ window: current.window, keep });
            const folded = applyFold({ state: current, plan, newSummary: { text: 'summary', tokens: 50 } });
            expect(applyFold({ state: folded, plan, newSummary: { text: 'again', tokens: 1 } })).toBe(folded);
            for (const item of plan.folded) summarized.add(item.seq);
            current = folded;
          }
          const places = [
            ...summarized,
            ...current.pinned.map((item) => item.seq),
            ...current.window.map((item) => item.seq),
          ];
          expect(places.sort((a, b) => a - b)).toEqual(seen);
          const covered = current.summary?.coveredThroughSeq ?? 0;
          expect(current.window.every((item) => item.seq > covered)).toBe(true);
          expect(current.window[0]?.role).not.toBe('tool');
        }
      }),
    );
  });

  it('no pack ever has an orphan tool message or an unanswered call, exceeds its budget, or loses track of omissions', () => {
    let built = 0;
    let omitting = 0;
    const options = fc.record({
      window: conversation,
      startOffset: fc.nat({ max: 30 }),
      pinCount: fc.nat({ max: 6 }),
      budget: fc.integer({ min: 20, max: 20_000 }),
      compat: fc.constantFrom('openai' as const, 'strict' as const),
      notes: fc.array(fc.string({ maxLength: 30 }), { maxLength: 2 }),
      withSummary: fc.boolean(),
    });
    fc.assert(
      fc.property(options, (input) => {
        const pinned = input.window.slice(0, input.pinCount);
        const contextState: ContextState = {
          summary: input.withSummary ? { text: 'So far [#1].', tokens: 8, coveredThroughSeq: 0, revision: 2 } : null,
          window: input.window.slice(input.pinCount),
          pinned,
          contextStartSeq: input.startOffset,
          memoryMode: 'summary',
        };
        let pack;
        try {
          pack = buildContextPack({
            systemPrefix: 'You help.',
            systemPrefixTokens: 3,
            state: contextState,
            budget: input.budget,
            compat: input.compat,
            notes: input.notes,
          });
        } catch (error) {
          // Refused only when what must be shown (prefix, pins, the newest user message) does not fit.
          expect(error).toBeInstanceOf(ContextOverBudgetError);
          expect((error as ContextOverBudgetError).budget).toBe(input.budget);
          expect((error as ContextOverBudgetError).required).toBeGreaterThan(input.budget);
          return;
        }
        built += 1;
        if (pack.omitted > 0) omitting += 1;
        expect(pack.tokens).toBeLessThanOrEqual(input.budget);
        expect(pack.tokens).toBe(pack.messages.reduce((sum, message) => sum + message.tokens, 3));
        const valid = validatePackOrdering(pack.messages, input.compat);
        expect(valid).toEqual({ ok: true, value: true });
        expect(pack.messages[0]?.role).toBe('system');
        expect(pack.messages[0]?.content.startsWith('You help.')).toBe(true);
        const visibleWindow = contextState.window.filter((item) => item.seq >= input.startOffset);
        const shownSeqs = new Set(pack.messages.map((message) => message.seq).filter((seq) => seq !== undefined));
        expect([...shownSeqs].every((seq) => seq >= input.startOffset)).toBe(true);
        if (input.compat === 'openai') {
          const shownWindow = visibleWindow.filter((item) => shownSeqs.has(item.seq));
          expect(shownWindow.length + pack.omitted).toBe(visibleWindow.length);
          expect(shownWindow).toEqual(visibleWindow.slice(pack.omitted));
        }
      }),
      { numRuns: 300 },
    );
    // The properties hold on packs actually built, some of them leaving messages out: not on refusals alone.
    expect(built).toBeGreaterThanOrEqual(MIN_BUILT);
    expect(omitting).toBeGreaterThanOrEqual(MIN_OMITTING);
  });

  it('builds a strict pack whose newest block fits only once merged, instead of refusing it (a case the property found)', () => {
    const lookups = ['s2-2', 's2-0', 's2-1'];
    const window: ContextEntry[] = [
      { seq: 3, role: 'user', content: 'user message 3', tokens: 104 },
      ...lookups.map((id, index) => ({
        seq: 4 + index,
        role: 'tool' as const,
        content: `result of ${id}`,
        tokens: 104,
        toolCallId: id,
      })),
    ];
    const pinned: ContextEntry[] = [
      { seq: 1, role: 'user', content: 'user message 1', tokens: 5 },
      {
        seq: 2,
        role: 'assistant',
        content: '',
        tokens: 104,
        toolCalls: lookups.map((id) => ({ id, name: 'lookup', args: { query: id } })),
      },
    ];
    const pack = buildContextPack({
      systemPrefix: 'You help.',
      systemPrefixTokens: 3,
      state: { summary: null, window, pinned, contextStartSeq: 0, memoryMode: 'summary' },
      budget: 814,
      compat: 'strict',
      notes: ['   '],
    });
    expect(pack.tokens).toBeLessThanOrEqual(814);
    expect(validatePackOrdering(pack.messages, 'strict')).toEqual({ ok: true, value: true });
  });

  it('chunked progressive summarizer input loses no entry and respects the budget', () => {
    fc.assert(
      fc.property(
        conversation,
        fc.integer({ min: 2500, max: 8000 }),
        fc.nat({ max: 1200 }),
        (folded, budget, previous) => {
          const summary = { text: 's', tokens: previous, coveredThroughSeq: 0, revision: 1 };
          const chunks = buildSummarizerInputs({ summary, folded, budget, summaryMaxTokens: 1200 });
          expect(chunks.flatMap((chunk) => chunk.entries.map((item) => item.seq))).toEqual(
            folded.map((item) => item.seq),
          );
          chunks.forEach((chunk, index) => {
            expect(chunk.tokens).toBeLessThanOrEqual(budget - (index === 0 ? previous : 1200));
            expect(chunk.fromSeq).toBe(chunk.entries[0]?.seq);
            expect(chunk.throughSeq).toBe(chunk.entries.at(-1)?.seq);
          });
        },
      ),
    );
  });

  it('filterCitations leaves only citations inside the covered range', () => {
    const citation = fc
      .tuple(fc.nat({ max: 100 }), fc.option(fc.nat({ max: 100 })))
      .map(([first, last]) => (last === null ? `[#${first}]` : `[#${first}–${last}]`));
    fc.assert(
      fc.property(
        fc.array(fc.oneof(citation, fc.constantFrom(' word', '. ', 'x'))),
        fc.nat({ max: 50 }),
        fc.nat({ max: 50 }),
        (parts, from, length) => {
          const filtered = filterCitations({ summary: parts.join(''), fromSeq: from, throughSeq: from + length });
          for (const match of filtered.matchAll(/#(\d+)/g)) {
            expect(Number(match[1])).toBeGreaterThanOrEqual(from);
            expect(Number(match[1])).toBeLessThanOrEqual(from + length);
          }
        },
      ),
    );
  });
});
