import { beforeAll, describe, expect, it } from 'vitest';
import { buildContextPack } from './build-context-pack';
import {
  chatCitation,
  mergeRecallCandidates,
  OFFLINE_ANSWER_PREFIX,
  RECALL_ELSEWHERE_HEADING,
  RECALL_END,
  RECALL_HEADING,
  RECALL_LABEL,
} from './build-recall-slot';
import { createTokenCounter } from './token-counter';
import { state, user, reply } from './test-fixtures';
import type { ContextEntry, RecalledMessage } from './types';

const counter = createTokenCounter('o200k_base');
const at = new Date('2026-03-04T05:06:07Z');
const recalled = (seq: number, content: string): RecalledMessage => ({
  seq,
  role: seq % 2 === 1 ? 'user' : 'assistant',
  content,
  createdAt: at,
});
const counted = (item: ContextEntry): ContextEntry => ({ ...item, tokens: counter.countMessage(item) });

describe('auto-recall in the context pack', () => {
  // Loading the tokenizer's ranks takes seconds on a busy machine: not part of any one test.
  beforeAll(() => {
    counter.countText('warm up');
  }, 60_000);
  const summary = { text: 'The user plans a trip [#1–20].', tokens: 9, coveredThroughSeq: 20, revision: 2 };
  const candidates = [
    recalled(7, 'My budget for the trip is 4000 euros.'),
    recalled(3, 'I prefer the window seat.'),
    recalled(12, 'Yes, LOCKER-77 it is.'),
  ];

  it('puts the recalled messages in one user-level message right after the newest user message, with their seqs', () => {
    const window = [user(21), reply(22), user(23)].map(counted);
    const pack = buildContextPack({
      systemPrefix: 'prefix',
      budget: 10_000,
      counter,
      recallTokens: 500,
      state: { ...state(window, { summary, pinned: [counted(user(5))] }), recalled: candidates },
    });
    const contents = pack.messages.map((message) => message.content);
    const slot = pack.messages.findIndex((message) => message.content.startsWith(RECALL_HEADING));
    expect(slot).toBe(5); // leading (prefix + summary), the pinned #5, #21, #22, the question #23, then the slot
    expect(pack.messages[slot - 1]?.seq).toBe(23);
    expect(pack.manifest.perCallFrom).toBe(slot);
    expect(pack.messages[slot]?.role).toBe('user');
    expect(contents[slot]).toContain(RECALL_LABEL);
    expect(contents[slot]?.endsWith(RECALL_END)).toBe(true);
    expect(contents[slot]).toContain('[#3 · user · 2026-03-04] I prefer the window seat.');
    // Transcript order inside the slot.
    expect(contents[slot]?.indexOf('#3')).toBeLessThan(contents[slot]?.indexOf('#7') ?? 0);
    expect(pack.messages.map((message) => message.seq).filter(Boolean)).toEqual([5, 21, 22, 23]);
    expect(pack.manifest.recalledSeqs).toEqual([3, 7, 12]);
    expect(pack.tokens).toBe(counter.countPack(pack.messages));
  });

  it('never repeats a window or pinned entry, and stays within its tokens (best ranked first)', () => {
    const window = [counted(user(7)), counted(reply(8))];
    const pack = buildContextPack({
      systemPrefix: 'prefix',
      budget: 10_000,
      counter,
      recallTokens: 90,
      state: {
        ...state(window, { pinned: [counted(user(12))] }),
        recalled: [...candidates, recalled(2, 'x '.repeat(400))],
      },
    });
    const slot = pack.messages.find((message) => message.content.startsWith(RECALL_HEADING));
    expect(pack.manifest.recalledSeqs).toEqual([3]);
    expect(slot?.tokens).toBeLessThanOrEqual(90);
  });

  it("never brings back the offline model's answers: the message one quotes gets the room", () => {
    const window = [counted(user(21))];
    const restated = {
      ...recalled(
        8,
        `${OFFLINE_ANSWER_PREFIX} You said: "My budget for the trip is 4000 euros.". My context: 2 messages.`,
      ),
      score: 9,
    };
    const pack = buildContextPack({
      systemPrefix: 'prefix',
      budget: 10_000,
      counter,
      recallTokens: 500,
      state: {
        ...state(window),
        recalled: [restated, { ...recalled(7, 'My budget for the trip is 4000 euros.'), score: 5 }],
      },
    });
    expect(pack.manifest.recalledSeqs).toEqual([7]);
    expect(pack.messages.some((message) => message.content.includes(OFFLINE_ANSWER_PREFIX))).toBe(false);
  });

  it('has no slot at 0 tokens or without candidates', () => {
    const window = [counted(user(21))];
    const off = buildContextPack({
      systemPrefix: 'p',
      budget: 10_000,
      counter,
      recallTokens: 0,
      state: { ...state(window), recalled: candidates },
    });
    expect(off.manifest.recalledSeqs).toEqual([]);
    expect(off.messages.some((message) => message.content.startsWith(RECALL_HEADING))).toBe(false);
  });

  it('over budget, drops the recall slot before any window entry', () => {
    const window = [user(21), reply(22), user(23)].map(counted);
    const full = buildContextPack({
      systemPrefix: 'prefix',
      budget: 10_000,
      counter,
      recallTokens: 500,
      state: { ...state(window), recalled: candidates },
    });
    const withoutRecall = buildContextPack({ systemPrefix: 'prefix', budget: 10_000, counter, state: state(window) });
    // A budget that holds the window but not the window and the slot.
    const budget = withoutRecall.tokens + 5;
    expect(full.tokens).toBeGreaterThan(budget);
    const tight = buildContextPack({
      systemPrefix: 'prefix',
      budget,
      counter,
      recallTokens: 500,
      state: { ...state(window), recalled: candidates },
    });
    expect(tight.omitted).toBe(0);
    expect(tight.manifest.recalledSeqs).toEqual([]);
    expect(tight.messages.map((message) => message.seq).filter(Boolean)).toEqual([21, 22, 23]);
  });
});

describe('cross-thread recall in the slot', () => {
  beforeAll(() => {
    counter.countText('warm up');
  }, 60_000);
  const elsewhere = (seq: number, content: string, score: number): RecalledMessage => ({
    seq,
    role: 'user',
    content,
    createdAt: at,
    score,
    thread: { id: '11111111-2222-3333-4444-555555555555', title: 'Travel papers' },
  });

  it("merges this thread's and the other threads' candidates on their score, this thread first on a tie", () => {
    const own = [
      { ...recalled(3, 'own three'), score: 2 },
      { ...recalled(5, 'own five'), score: 1 },
    ];
    const others = [elsewhere(9, 'other nine', 3), elsewhere(4, 'other four', 1)];
    expect(mergeRecallCandidates(own, others).map((message) => `${message.thread ? 'o' : 't'}${message.seq}`)).toEqual([
      'o9',
      't3',
      't5',
      'o4',
    ]);
    expect(mergeRecallCandidates(own, [])).toEqual(own);
  });

  it("shows other chats' messages under their own heading with the chat's title, date and citation, and records them apart", () => {
    const window = [user(21), reply(22), user(23)].map(counted);
    const pack = buildContextPack({
      systemPrefix: 'prefix',
      budget: 10_000,
      counter,
      recallTokens: 500,
      // The same seq as a window entry is no reason to leave out another chat's message.
      state: {
        ...state(window),
        recalled: [elsewhere(21, 'My passport number is C4R55T901.', 5), recalled(3, 'I prefer the window seat.')],
      },
    });
    const slot = pack.messages.find((message) => message.content.startsWith(RECALL_HEADING))?.content ?? '';
    expect(slot).toContain(
      `${RECALL_ELSEWHERE_HEADING}\n${chatCitation('11111111-2222-3333-4444-555555555555', 21)} · chat "Travel papers" · user · 2026-03-04 My passport number is C4R55T901.`,
    );
    expect(slot.indexOf('[#3 ·')).toBeLessThan(slot.indexOf(RECALL_ELSEWHERE_HEADING));
    expect(pack.manifest.recalledSeqs).toEqual([3]);
    expect(pack.manifest.recalledElsewhere).toEqual([{ threadId: '11111111-2222-3333-4444-555555555555', seq: 21 }]);
  });
});
