import { describe, expect, it, vi } from 'vitest';
import { createMemoryEventBus, createMemoryStores } from '../../../test/fakes';
import type { ThreadEvent } from '../../shared/events';
import type { LogPort } from '../ports';
import { AssistantStream } from './assistant-stream';

function spyLog() {
  return { debug: vi.fn(), info: vi.fn(), warn: vi.fn(), error: vi.fn() } satisfies LogPort;
}

describe('AssistantStream', () => {
  it('logs a failed creation of the streaming message and creates it at the next delta with the whole text', async () => {
    const stores = createMemoryStores();
    await stores.threads.ensureUser('user-1', 'guest');
    const thread = await stores.threads.createThread({ ownerId: 'user-1', maxThreads: 10 });
    const { turn } = await stores.turns.acceptUserMessage({
      threadId: thread.id,
      ownerId: 'user-1',
      content: 'hello',
      tokens: 1,
      encoding: 'o200k_base',
      clientMessageId: null,
      maxQueued: 5,
    });
    let failures = 1;
    const turns = {
      ...stores.turns,
      appendTurnMessage: (input: Parameters<typeof stores.turns.appendTurnMessage>[0]) =>
        failures-- > 0 ? Promise.reject(new Error('database down')) : stores.turns.appendTurnMessage(input),
    };
    const events = createMemoryEventBus();
    const published: ThreadEvent[] = [];
    events.subscribe(thread.id, (event) => published.push(event));
    const log = spyLog();
    const stream = new AssistantStream({ turn, turns, events, log, saveMs: 1000 });

    stream.onDelta('Hel');
    await stream.settled();
    expect(log.warn).toHaveBeenCalledWith(
      expect.objectContaining({ err: expect.objectContaining({ message: 'database down' }) }),
      'creating the streaming message failed',
    );
    expect(stream.messageId).toBeNull();

    stream.onDelta('lo');
    await stream.settled();
    expect(stream.messageId).not.toBeNull();
    const start = published.find((event) => event.type === 'message-start');
    const delta = published.find((event) => event.type === 'message-delta');
    expect(start).toBeDefined();
    expect(delta).toMatchObject({ messageId: stream.messageId, offset: 0, delta: 'Hello' });
  });
});
