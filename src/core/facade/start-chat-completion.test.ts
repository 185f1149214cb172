import { describe, expect, it } from 'vitest';
import type { Thread, TranscriptMessage } from '../domain/types';
import type { ClientHistoryStore, ClientMessage, ConversationBranch } from '../ports';
import { normalize } from './reconcile-history';
import { candidatesOf, MAX_BRANCHES_COMPARED, type ChatCompletionDeps } from './start-chat-completion';

/** A transcript of user/assistant pairs: `turn i: <text>` and `answer i on <branch>`. */
function transcript(threadId: string, branch: string, turns: number): TranscriptMessage[] {
  const messages: TranscriptMessage[] = [];
  for (let turn = 1; turn <= turns; turn += 1) {
    for (const [role, content] of [
      ['user', `turn ${turn}: ${turn === turns ? branch : 'shared'}`],
      ['assistant', `answer ${turn} on ${turn === turns ? branch : 'shared'}`],
    ] as const) {
      const seq = messages.length + 1;
      messages.push({
        id: `${threadId}-m${seq}`,
        threadId,
        seq,
        role,
        content,
        toolCalls: null,
        toolCallId: null,
        status: 'complete',
        error: null,
        tokens: 3,
        clientMessageId: null,
        turnId: null,
        toolRunId: null,
        pinned: false,
        superseded: false,
        deleted: false,
        createdAt: new Date(0),
        updatedAt: new Date(0),
        completedAt: new Date(0),
      } as TranscriptMessage);
    }
  }
  return messages;
}

/** A 64-bit FNV-1a of a text, hex (the fake's chain: the real one is SHA-256, src/db/client-prefix-hash.ts). */
function fnv(text: string): string {
  let hash = 0xcbf29ce484222325n;
  for (let index = 0; index < text.length; index += 1)
    hash = BigInt.asUintN(64, (hash ^ BigInt(text.charCodeAt(index))) * 0x100000001b3n);
  return hash.toString(16);
}

const bytes = (text: string) => new TextEncoder().encode(text);
const text = (data: Uint8Array) => new TextDecoder().decode(data);
const link = (previous: string, message: { role: string; content: string }) =>
  fnv(`${previous}\u0000${message.role}\u0000${normalize(message.content)}`);

/**
 * The history store over in-memory transcripts of user/assistant pairs (one item a message), chained as the database
 * chains them; `reads` lists the threads whose messages were read, `rows` counts the messages read.
 */
function fakeHistoryStore(transcripts: Map<string, TranscriptMessage[]>, options: { hashes?: boolean } = {}) {
  const reads: string[] = [];
  const read = { rows: 0 };
  const hashesOf = (threadId: string) => {
    let previous = '';
    return transcripts.get(threadId)!.map((message) => (previous = link(previous, message)));
  };
  const store: ClientHistoryStore = {
    chainHashes: ({ messages, from, base }) => {
      let previous = base ? text(base) : '';
      return messages.slice(from).map((message) => bytes((previous = link(previous, message))));
    },
    findPrefix: async ({ threadId, hashes, afterSeq, throughSeq }) => {
      if (options.hashes === false) return null;
      const wanted = new Set(hashes.map(text));
      const stored = hashesOf(threadId);
      for (let seq = throughSeq; seq > afterSeq; seq -= 1) {
        const hash = stored[seq - 1]!;
        if (!wanted.has(hash)) continue;
        read.rows += 1;
        const role = transcripts.get(threadId)![seq - 1]!.role;
        return { seq, role, prefixHash: bytes(hash), answerFrom: role === 'assistant' ? seq : null };
      }
      return null;
    },
    readRows: async ({ threadId, fromSeq, throughSeq, limit }) => {
      reads.push(threadId);
      const stored = hashesOf(threadId);
      const rows = transcripts
        .get(threadId)!
        .filter((message) => message.seq! >= fromSeq && message.seq! <= throughSeq)
        .slice(0, limit)
        .map((message) => ({
          message,
          prefixHash: bytes(stored[message.seq! - 1]!),
          answerFrom: message.role === 'assistant' ? message.seq : null,
        }));
      read.rows += rows.length;
      return rows;
    },
    writing: async () => false,
    userAfter: async ({ threadId, afterSeq, throughSeq }) =>
      transcripts
        .get(threadId)!
        .some((message) => message.role === 'user' && message.seq! > afterSeq && message.seq! <= throughSeq),
  };
  return { store, reads, read };
}

/** A conversation of `count` branches of a 200-turn chat that differ in their last turn; counts the transcripts read. */
function conversation(count: number, options: { hashes?: boolean; maxReadMessages?: number } = {}) {
  const transcripts = new Map<string, TranscriptMessage[]>();
  const branches: ConversationBranch[] = [];
  for (let index = 0; index < count; index += 1) {
    const threadId = `thread-${index}`;
    const messages = transcript(threadId, `branch ${index}`, 200);
    transcripts.set(threadId, messages);
    branches.push({ threadId, lastTextTail: messages.at(-1)!.content.slice(-256) });
  }
  const { store, reads, read } = fakeHistoryStore(transcripts, options);
  const deps = {
    conversations: { threadsOf: async () => branches, history: store },
    threads: {
      findThread: async (id: string) => ({ id, lastSeq: transcripts.get(id)!.length, settings: {} }) as Thread,
    },
    ...(options.maxReadMessages ? { maxReadMessages: options.maxReadMessages } : {}),
  } as unknown as ChatCompletionDeps;
  const historyOf = (index: number): ClientMessage[] =>
    transcripts
      .get(`thread-${index}`)!
      .map((message) =>
        message.role === 'user'
          ? { role: 'user', content: message.content }
          : { role: 'assistant', content: message.content, toolCalls: [] },
      );
  return { deps, reads, read, historyOf };
}

const request = (messages: ClientMessage[]) => ({
  userId: 'user-1',
  conversation: { key: 'id:chat', explicit: true },
  messages,
});

describe('comparing a history with the branches of its conversation', () => {
  it('goes on in the branch the history ends in, however old, reading that one branch only, its last answer', async () => {
    const { deps, reads, read, historyOf } = conversation(30);
    // Branch 27 is among the least recently active (listed late); the history continues it.
    const candidates = await candidatesOf(request([...historyOf(27), { role: 'user', content: 'next' }]), deps);
    expect(reads).toEqual(['thread-27']);
    expect(read.rows).toBe(2);
    expect(candidates.map((candidate) => [candidate.thread.id, candidate.plan.kind])).toEqual([['thread-27', 'send']]);
  });

  it('compares at most MAX_BRANCHES_COMPARED branches when none takes the whole history (an edit), a few messages each', async () => {
    const { deps, reads, read, historyOf } = conversation(30);
    const edited = [...historyOf(3).slice(0, -2), { role: 'user' as const, content: 'turn 200: edited' }];
    const candidates = await candidatesOf(request(edited), deps);
    expect(new Set(reads).size).toBe(MAX_BRANCHES_COMPARED);
    expect(read.rows).toBeLessThanOrEqual(MAX_BRANCHES_COMPARED * 4);
    expect(candidates.every((candidate) => candidate.plan.kind === 'edit' && candidate.plan.matched === 398)).toBe(
      true,
    );
  });

  it('refuses a history that takes reading more than maxReadMessages, and compares no further branch', async () => {
    // No hashes to look up (say, chains not written yet): the comparison reads from the start until the budget is spent.
    const { deps, reads, read, historyOf } = conversation(3, { hashes: false, maxReadMessages: 50 });
    const candidates = await candidatesOf(request([...historyOf(1), { role: 'user', content: 'next' }]), deps);
    expect(read.rows).toBeLessThanOrEqual(50);
    expect(new Set(reads).size).toBe(1);
    expect(candidates.map((candidate) => candidate.plan)).toEqual([
      { kind: 'refuse', reason: expect.stringContaining('FACADE_MAX_READ_MESSAGES'), matched: 0 },
    ]);
  });
});
