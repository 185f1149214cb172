import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { buildContextPack, type ContextPack } from './build-context-pack';
import { RECALL_HEADING } from './build-recall-slot';
import { createTokenCounter } from './token-counter';
import type { ContextEntry, ContextState, HeldRecallNote, PackMessage, RecalledMessage, SummaryState } from './types';
import { validatePackOrdering, type ChatTemplateCompat } from './validate-pack-ordering';

// Sticky recall (issue 24): what a call recalled for a user message stays where it was shown, next to that message,
// on every later call until the next fold; later calls recall only what no note holds yet. So each call's prompt
// extends the whole previous prompt (but its trailing server notes), recall included.

const counter = createTokenCounter('o200k_base');
const PREFIX = 'You are a careful assistant.';
const summary: SummaryState = {
  text: 'The user planned a trip to Rome [#1–9].',
  tokens: 13,
  coveredThroughSeq: 9,
  revision: 2,
};
const at = new Date('2026-05-06T07:08:09Z');

function counted(entry: Omit<ContextEntry, 'tokens'>): ContextEntry {
  return { ...entry, tokens: counter.countMessage(entry) };
}

/** An old message of this thread (its text depends on its seq only, as a stored message's does). */
function old(seq: number): RecalledMessage {
  return { seq, role: 'user', content: `Older message ${seq}: the budget was ${seq * 100} euros.`, createdAt: at };
}

function elsewhere(seq: number): RecalledMessage {
  return {
    seq,
    role: 'user',
    content: `In another chat ${seq}: my locker is LOCKER-${seq}.`,
    createdAt: at,
    thread: { id: 'b0b0b0b0-0000-4000-8000-000000000001', title: 'Gym' },
  };
}

/** The held notes a store would give back for the calls made so far (the first note per served message). */
function heldFrom(packs: readonly ContextPack[], candidates: ReadonlyMap<string, RecalledMessage>): HeldRecallNote[] {
  const notes = new Map<number, HeldRecallNote>();
  for (const made of packs) {
    const note = made.manifest.recallNote;
    if (!note || notes.has(note.servedSeq)) continue;
    const recalled = [
      ...note.seqs.map((seq) => candidates.get(`#${seq}`)),
      ...note.elsewhere.map((item) => candidates.get(`${item.threadId}#${item.seq}`)),
    ].filter((message): message is RecalledMessage => message !== undefined);
    notes.set(note.servedSeq, { servedSeq: note.servedSeq, recalled });
  }
  return [...notes.values()];
}

function build(
  window: ContextEntry[],
  recalled: RecalledMessage[],
  heldRecall: HeldRecallNote[],
  compat: ChatTemplateCompat,
  notes: string[] = [],
  recallHeldTokens?: number,
): ContextPack {
  const state: ContextState = {
    summary,
    window,
    pinned: [],
    contextStartSeq: 10,
    memoryMode: 'summary',
    recalled,
    heldRecall,
  };
  return buildContextPack({
    systemPrefix: PREFIX,
    state,
    budget: 200_000,
    counter,
    compat,
    recallTokens: 300,
    ...(notes.length > 0 ? { notes } : {}),
    ...(recallHeldTokens !== undefined ? { recallHeldTokens } : {}),
  });
}

function rendered(messages: readonly PackMessage[]): string {
  return messages
    .map(
      (message) =>
        `<${message.role} ${JSON.stringify(message.toolCalls ?? null)} ${message.toolCallId ?? ''}>${message.content}<end>`,
    )
    .join('');
}

const withoutEnd = (text: string): string => text.slice(0, -'<end>'.length);
const keyOf = (message: RecalledMessage): string =>
  message.thread ? `${message.thread.id}#${message.seq}` : `#${message.seq}`;

describe('sticky recall', () => {
  beforeAll(() => {
    counter.countText('warm up');
  }, 60_000);

  it('keeps what a call recalled next to the message it served, and recalls only what is new', () => {
    const candidates = new Map([old(1), old(2), old(3), elsewhere(4)].map((message) => [keyOf(message), message]));
    const window = [counted({ seq: 11, role: 'user', content: 'What was the budget?' })];
    const first = build(window, [old(2), old(1)], [], 'openai');
    expect(first.manifest.recallNote).toMatchObject({ servedSeq: 11, seqs: [1, 2], elsewhere: [] });
    // Marked as held: later calls repeat it in place, so a provider's cache breakpoint may end after it.
    expect(first.messages.at(-1)).toMatchObject({ content: expect.stringContaining('Older message 1'), held: true });

    window.push(
      counted({ seq: 12, role: 'assistant', content: 'It was 200 euros.' }),
      counted({ seq: 13, role: 'user', content: 'And my locker?' }),
    );
    const second = build(window, [old(2), elsewhere(4), old(3)], heldFrom([first], candidates), 'openai');
    // The first call's prompt is the start of the second's: its recall stayed before message 11.
    expect(second.messages.slice(0, first.messages.length)).toEqual(first.messages);
    // Only what the first note did not show is recalled anew, just before the newest message.
    expect(second.manifest.recallNote).toMatchObject({
      servedSeq: 13,
      seqs: [3],
      elsewhere: [{ threadId: 'b0b0b0b0-0000-4000-8000-000000000001', seq: 4 }],
    });
    expect(second.manifest.recalledSeqs).toEqual([1, 2, 3]);
    const fresh = second.messages.at(-1);
    expect(fresh?.content).toContain('Older message 3');
    expect(fresh?.content).not.toContain('Older message 2');
    expect(second.manifest.parts.recall).toBe(fresh?.tokens);
    expect(second.manifest.recallNote?.tokens).toBe(fresh?.tokens);
    expect(second.manifest.parts.heldRecall).toBe(first.messages.at(-1)?.tokens);
  });

  it('holds no new note past RECALL_HELD_TOKENS: the slot serves its own turn, the notes held stay where they were', () => {
    const candidates = new Map([old(1), old(2), old(3)].map((message) => [keyOf(message), message]));
    const window = [counted({ seq: 11, role: 'user', content: 'What was the budget?' })];
    // The bound: exactly the first note's tokens.
    const bound = build(window, [old(1)], [], 'openai').manifest.recallNote?.tokens ?? 0;
    const first = build(window, [old(1)], [], 'openai', [], bound);
    expect(first.manifest.recallNote).toMatchObject({ servedSeq: 11, seqs: [1], tokens: bound });

    window.push(
      counted({ seq: 12, role: 'assistant', content: 'It was 100 euros.' }),
      counted({ seq: 13, role: 'user', content: 'And the hotel?' }),
    );
    const second = build(window, [old(3)], heldFrom([first], candidates), 'openai', [], bound);
    // The model still sees what was recalled for message 13, after it, as a slot of this call only.
    expect(second.messages.at(-1)?.content).toContain('Older message 3');
    expect(second.messages.at(-1)?.held).toBeUndefined();
    expect(second.manifest.recalledSeqs).toEqual([1, 3]);
    // No note is recorded for it (the note held already takes the whole bound), so no later call holds it...
    expect(second.manifest.recallNote).toBeNull();
    expect(second.messages.slice(0, first.messages.length)).toEqual(first.messages);
    // ...while without the bound it would be held.
    expect(build(window, [old(3)], heldFrom([first], candidates), 'openai').manifest.recallNote).toMatchObject({
      servedSeq: 13,
      seqs: [3],
    });
  });

  it('with RECALL_STICKY off, records no note to hold and leaves the slot unmarked (later calls will not repeat it)', () => {
    const window = [counted({ seq: 11, role: 'user', content: 'What was the budget?' })];
    const pack = buildContextPack({
      systemPrefix: PREFIX,
      state: { summary, window, pinned: [], contextStartSeq: 10, memoryMode: 'summary', recalled: [old(1)] },
      budget: 200_000,
      counter,
      recallTokens: 300,
      recallSticky: false,
    });
    expect(pack.messages.at(-1)?.content).toContain('Older message 1');
    expect(pack.messages.at(-1)?.held).toBeUndefined();
    expect(pack.manifest.recallNote).toBeNull();
    expect(pack.manifest.recalledSeqs).toEqual([1]);
  });

  it('gives a message a note already serves no new slot (a later round of its turn, a regeneration)', () => {
    const candidates = new Map([old(1), old(2)].map((message) => [keyOf(message), message]));
    const window = [counted({ seq: 11, role: 'user', content: 'What was the budget?' })];
    const first = build(window, [old(1)], [], 'openai');
    window.push(
      counted({
        seq: 12,
        role: 'assistant',
        content: '',
        toolCalls: [{ id: 'c1', name: 'lookup', args: { q: 'budget' } }],
      }),
      counted({ seq: 13, role: 'tool', content: 'budget: 100', toolCallId: 'c1' }),
    );
    const round = build(window, [old(2), old(1)], heldFrom([first], candidates), 'openai');
    expect(round.manifest.recallNote).toBeNull();
    expect(round.messages.slice(0, first.messages.length)).toEqual(first.messages);
    expect(round.messages.filter((message) => message.content.includes(RECALL_HEADING))).toHaveLength(1);
  });

  it('drops a note with the message it served once that message leaves the window (a fold)', () => {
    const window = [counted({ seq: 15, role: 'user', content: 'Next topic.' })];
    const made = build(window, [], [{ servedSeq: 11, recalled: [old(1)] }], 'openai');
    expect(made.messages.some((message) => message.content.includes(RECALL_HEADING))).toBe(false);
    expect(made.manifest.recalledSeqs).toEqual([]);
  });

  it('each call extends the whole previous prompt but its trailing server notes (openai and strict)', () => {
    const pool = Array.from({ length: 8 }, (_, index) => (index % 4 === 3 ? elsewhere(index + 1) : old(index + 1)));
    const candidates = new Map(pool.map((message) => [keyOf(message), message]));
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            kind: fc.constantFrom('user' as const, 'reply' as const, 'tool-round' as const),
            picks: fc.uniqueArray(fc.integer({ min: 0, max: pool.length - 1 }), { maxLength: 4 }),
            note: fc.boolean(),
          }),
          { minLength: 2, maxLength: 10 },
        ),
        fc.constantFrom<ChatTemplateCompat>('openai', 'strict'),
        (steps, compat) => {
          const window: ContextEntry[] = [counted({ seq: 11, role: 'user', content: 'first question' })];
          const packs: ContextPack[] = [];
          let recalled: RecalledMessage[] = [];
          let previous: { messages: PackMessage[]; notes: number } | null = null;
          for (const item of steps) {
            const seq = (window.at(-1)?.seq ?? 11) + 1;
            if (item.kind === 'user') {
              // A user message may only follow an answer.
              if (window.at(-1)?.role === 'user')
                window.push(counted({ seq, role: 'assistant', content: `answer ${seq}` }));
              window.push(counted({ seq: (window.at(-1)?.seq ?? 11) + 1, role: 'user', content: `question ${seq}` }));
              recalled = item.picks.map((index) => pool[index] as RecalledMessage);
            } else if (item.kind === 'reply') {
              window.push(counted({ seq, role: 'assistant', content: `answer ${seq}` }));
            } else {
              window.push(
                counted({
                  seq,
                  role: 'assistant',
                  content: '',
                  toolCalls: [{ id: `c${seq}`, name: 'lookup', args: { q: seq } }],
                }),
                counted({ seq: seq + 1, role: 'tool', content: `result ${seq}`, toolCallId: `c${seq}` }),
              );
            }
            const notes = item.note ? ['Tool results arrived.'] : [];
            const made = build([...window], recalled, heldFrom(packs, candidates), compat, notes);
            expect(
              validatePackOrdering(made.messages, compat, { perCallFrom: made.manifest.perCallFrom ?? -1 }),
            ).toEqual({ ok: true, value: true });
            // (A strict pack merges a server note into the message before it: there the check waits for a call without one.)
            if (previous && previous.notes >= 0) {
              const kept = previous.messages.slice(0, previous.messages.length - previous.notes);
              expect(rendered(made.messages).startsWith(withoutEnd(rendered(kept)))).toBe(true);
            }
            // A recalled message is shown once per pack, and never with system authority.
            const shown = made.messages.filter((message) => message.content.includes(RECALL_HEADING));
            for (const message of shown) expect(compat === 'strict' || message.role === 'user').toBe(true);
            for (const message of pool) {
              const count = made.messages.reduce(
                (sum, packed) => sum + packed.content.split(message.content).length - 1,
                0,
              );
              expect(count).toBeLessThanOrEqual(1);
            }
            packs.push(made);
            previous = {
              messages: made.messages,
              notes: compat === 'openai' ? notes.length : notes.length > 0 ? -1 : 0,
            };
          }
        },
      ),
      { numRuns: 80 },
    );
  }, 120_000);
});
