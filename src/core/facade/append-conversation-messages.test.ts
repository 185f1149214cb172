import { describe, expect, it } from 'vitest';
import { createMemoryFacadeConversationStore, createMemoryStores } from '../../../test/fakes';
import { silentLog, testSettings } from '../../../test/fakes/summary-use-case-fakes';
import { AppError } from '../errors/app-error';
import { createMemoryRateLimiter } from '../limits/rate-limiter';
import type { ClientMessage, ThreadEventBus } from '../ports';
import type { ThreadEvent } from '../../shared/events';
import {
  appendConversationMessages,
  MAX_APPENDED_ITEMS,
  type AppendConversationDeps,
} from './append-conversation-messages';

async function setUp(options: { sends?: number } = {}) {
  const stores = createMemoryStores();
  await stores.threads.ensureUser('u1', 'guest');
  const thread = await stores.threads.createThread({ ownerId: 'u1', maxThreads: 10 });
  const published: ThreadEvent[] = [];
  const folds: string[] = [];
  const titled: string[] = [];
  const events = { publish: (event: ThreadEvent) => published.push(event) } as unknown as ThreadEventBus;
  const deps: AppendConversationDeps = {
    conversations: createMemoryFacadeConversationStore(stores.database),
    turns: stores.turns,
    sendLimiter: createMemoryRateLimiter({ limit: options.sends ?? 100 }),
    settings: testSettings(),
    maxMessageChars: 1_000,
    events,
    jobs: { enqueueFold: async (threadId: string) => (folds.push(threadId), 'job') } as AppendConversationDeps['jobs'],
    log: silentLog,
    requestTitle: async (threadId) => titled.push(threadId),
  };
  return { stores, thread, deps, published, folds, titled };
}

const question: ClientMessage = { role: 'user', content: 'a question' };
const answer: ClientMessage = { role: 'assistant', content: 'an answer', toolCalls: [] };

describe('appendConversationMessages', () => {
  it('stores plain messages with no turn, tells open tabs, titles the thread once and queues a fold that became due', async () => {
    const { stores, thread, deps, published, folds, titled } = await setUp();
    const call = { id: 'call_1', name: 'lookup', arguments: '{"q":"x"}' };
    const appended = await appendConversationMessages(
      {
        userId: 'u1',
        threadId: thread.id,
        messages: [
          question,
          { role: 'assistant', content: '', toolCalls: [call] },
          { role: 'tool', toolCallId: 'call_1', content: 'found' },
          answer,
        ],
      },
      deps,
    );
    expect(appended.map((message) => [message.seq, message.role, message.status, message.turnId])).toEqual([
      [1, 'user', 'complete', null],
      [2, 'assistant', 'complete', null],
      [3, 'tool', 'complete', null],
      [4, 'assistant', 'complete', null],
    ]);
    expect(appended[1]?.toolCalls).toEqual([{ id: 'call_1', name: 'lookup', args: { q: 'x' } }]);
    expect(stores.database.turns).toEqual([]);
    expect(published.map((event) => event.type)).toEqual([
      'message-created',
      'message-created',
      'message-created',
      'message-created',
    ]);
    expect(titled).toEqual([thread.id]);
    // The test settings fold at 4 messages: the window now holds 4.
    expect(folds).toEqual([thread.id]);
    await appendConversationMessages({ userId: 'u1', threadId: thread.id, messages: [question] }, deps);
    expect(titled).toEqual([thread.id]);
  });

  it('checks every item before writing one; spends the send limit once, first', async () => {
    const { stores, thread, deps } = await setUp({ sends: 3 });
    const refusals: [ClientMessage[], string][] = [
      [[question, { role: 'user', content: 'x'.repeat(1_001) }], 'TOO_LARGE'],
      [[question, { role: 'assistant', content: 'a\u0000b', toolCalls: [] }], 'VALIDATION'],
      [[{ role: 'assistant', content: '', toolCalls: [{ id: 'c', name: 'f', arguments: 'not json' }] }], 'VALIDATION'],
    ];
    for (const [messages, code] of refusals)
      await expect(
        appendConversationMessages({ userId: 'u1', threadId: thread.id, messages }, deps),
      ).rejects.toMatchObject({ code });
    expect(stores.database.messages).toEqual([]);
    // The limit was spent by each refused request too.
    await expect(
      appendConversationMessages({ userId: 'u1', threadId: thread.id, messages: [question] }, deps),
    ).rejects.toMatchObject({ code: 'RATE_LIMITED' });
    const many = Array.from({ length: MAX_APPENDED_ITEMS + 1 }, () => answer);
    const { deps: fresh, thread: other } = await setUp();
    await expect(
      appendConversationMessages({ userId: 'u1', threadId: other.id, messages: many }, fresh),
    ).rejects.toMatchObject({ code: 'VALIDATION' });
  });

  it("refuses another user's thread (NOT_FOUND) and a thread whose answer is being written (CONFLICT)", async () => {
    const { stores, thread, deps } = await setUp();
    const error = await appendConversationMessages(
      { userId: 'u2', threadId: thread.id, messages: [question] },
      deps,
    ).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(AppError);
    expect(error).toMatchObject({ code: 'NOT_FOUND' });
    await stores.turns.acceptUserMessage({
      threadId: thread.id,
      ownerId: 'u1',
      content: 'waiting',
      tokens: 2,
      encoding: 'o200k_base',
      clientMessageId: null,
      maxQueued: 5,
    });
    await expect(
      appendConversationMessages({ userId: 'u1', threadId: thread.id, messages: [question] }, deps),
    ).rejects.toMatchObject({ code: 'CONFLICT' });
    expect(stores.database.messages.map((message) => message.content)).toEqual(['waiting']);
  });
});
