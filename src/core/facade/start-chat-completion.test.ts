import { describe, expect, it } from 'vitest';
import {
  createMemoryClientHistoryStore,
  createMemoryDatabase,
  createMemoryThreadStore,
  type MemoryDatabase,
} from '../../../test/fakes';
import type { MessageRow } from '../../../test/fakes/memory-database';
import type { ClientHistoryStore, ClientMessage, ConversationBranch } from '../ports';
import { candidatesOf, MAX_BRANCHES_COMPARED, type ChatCompletionDeps } from './start-chat-completion';

/** Stores a transcript of user/assistant pairs, `turn i: <text>` and `answer i on <branch>`, as the thread's messages. */
function storeTranscript(database: MemoryDatabase, threadId: string, branch: string, turns: number): MessageRow[] {
  const messages: MessageRow[] = [];
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
        encoding: 'o200k_base',
      });
    }
  }
  database.messages.push(...messages);
  const thread = database.threads.get(threadId);
  if (thread) thread.lastSeq = messages.length;
  return messages;
}

/**
 * The in-memory history store (chained as the database chains a thread) with a count of what it reads: `reads` lists
 * the threads whose messages were read, `rows` counts the messages read. With `hashes: false`, no hash is found.
 */
function countingStore(history: ClientHistoryStore, options: { hashes?: boolean }) {
  const reads: string[] = [];
  const read = { rows: 0 };
  const store: ClientHistoryStore = {
    chainHashes: history.chainHashes,
    findPrefix: async (input) => {
      if (options.hashes === false) return null;
      const hit = await history.findPrefix(input);
      read.rows += hit ? 1 : 0;
      return hit;
    },
    readRows: async (input) => {
      reads.push(input.threadId);
      const rows = await history.readRows(input);
      read.rows += rows.length;
      return rows;
    },
    writing: async (threadId) => {
      const writing = await history.writing(threadId);
      read.rows += writing ? 1 : 0;
      return writing;
    },
    userAfter: async (input) => {
      const found = await history.userAfter(input);
      read.rows += found ? 1 : 0;
      return found;
    },
  };
  return { store, reads, read };
}

/** A conversation of `count` branches of a 200-turn chat that differ in their last turn; counts the transcripts read. */
async function conversation(count: number, options: { hashes?: boolean; maxReadMessages?: number } = {}) {
  const database = createMemoryDatabase();
  const threads = createMemoryThreadStore(database);
  await threads.ensureUser('user-1', 'guest');
  const transcripts = new Map<string, MessageRow[]>();
  const branches: ConversationBranch[] = [];
  for (let index = 0; index < count; index += 1) {
    const { id } = await threads.createThread({ ownerId: 'user-1', maxThreads: 100 });
    const messages = storeTranscript(database, id, `branch ${index}`, 200);
    transcripts.set(`thread-${index}`, messages);
    branches.push({ threadId: id, lastTextTail: messages.at(-1)!.content.slice(-256) });
  }
  const { store, reads, read } = countingStore(createMemoryClientHistoryStore(database), options);
  const deps = {
    conversations: { threadsOf: async () => branches, history: store },
    threads,
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
  const idOf = (index: number) => branches[index]!.threadId;
  return { deps, reads, read, historyOf, idOf };
}

const request = (messages: ClientMessage[]) => ({
  userId: 'user-1',
  conversation: { key: 'id:chat', explicit: true },
  messages,
});

describe('comparing a history with the branches of its conversation', () => {
  it('goes on in the branch the history ends in, however old, reading that one branch only, its last answer', async () => {
    const { deps, reads, read, historyOf, idOf } = await conversation(30);
    // Branch 27 is among the least recently active (listed late); the history continues it.
    const candidates = await candidatesOf(request([...historyOf(27), { role: 'user', content: 'next' }]), deps);
    expect(reads).toEqual([idOf(27)]);
    expect(read.rows).toBe(2);
    expect(candidates.map((candidate) => [candidate.thread.id, candidate.plan.kind])).toEqual([[idOf(27), 'send']]);
  });

  it('compares at most MAX_BRANCHES_COMPARED branches when none takes the whole history (an edit), a few messages each', async () => {
    const { deps, reads, read, historyOf } = await conversation(30);
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
    const { deps, reads, read, historyOf } = await conversation(3, { hashes: false, maxReadMessages: 50 });
    const candidates = await candidatesOf(request([...historyOf(1), { role: 'user', content: 'next' }]), deps);
    expect(read.rows).toBeLessThanOrEqual(50);
    expect(new Set(reads).size).toBe(1);
    expect(candidates.map((candidate) => candidate.plan)).toEqual([
      { kind: 'refuse', reason: expect.stringContaining('FACADE_MAX_READ_MESSAGES'), matched: 0 },
    ]);
  });
});
