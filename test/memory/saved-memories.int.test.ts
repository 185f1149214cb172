import { describe, expect, it } from 'vitest';
import { SAVED_MEMORIES_HEADING, SAVED_MEMORIES_PREAMBLE } from '../../src/core/context';
import { wireContentText } from '../../src/llm/count-chat-tokens';
import type { MessageContextDto, MessageDto, SavedMemoryDto, SavedMemoryListDto } from '../../src/shared/api';
import { useChatServer } from '../support/chat-server';
import {
  echoResponder,
  lastUserText,
  replyWithText,
  replyWithToolCalls,
  type StubRequest,
  type StubResponder,
} from '../support/openai-stub';
import { memoryKit } from './memory-test-kit';

/** "Remember: <fact>" makes the model call save_memory with the fact; the tool's answer gets a short reply. */
const responder: StubResponder = (request) => {
  const last = request.body.messages.at(-1);
  if (last?.role === 'tool') return replyWithText('Noted, I will remember that.');
  const asked = /^Remember: (.+)$/.exec(lastUserText(request.body));
  if (asked) return replyWithToolCalls([{ name: 'save_memory', arguments: { text: asked[1] } }]);
  return echoResponder(request);
};

/** The leading system message of a chat request (system prefix, saved memories, summary). */
function leading(request: StubRequest | undefined): string {
  const first = request?.body.messages[0];
  return first && first.role === 'system' ? wireContentText(first.content) : '';
}

describe("saved memories: the user's items reach the model in every thread", () => {
  const server = useChatServer({
    stub: { responder },
    env: { USER_MEMORY_TOKENS: '60', MAX_MEMORY_ITEMS: '4', MEMORY_WRITES_PER_MINUTE: '12', SAVE_MEMORY_TOOL: 'on' },
  });
  const chats = () => server.stub.requests.filter((request) => request.kind === 'chat');
  const lastChat = () => chats().at(-1);

  async function call(token: string, path: string, init: { method?: string; json?: unknown } = {}) {
    const response = await server.app.api(path, { ...init, token });
    const text = await response.text();
    return { status: response.status, body: text === '' ? null : (JSON.parse(text) as unknown) };
  }
  const list = async (token: string) => ((await call(token, '/api/memory')).body as SavedMemoryListDto).items;

  it("REST: add, list newest first, edit, delete; 400 naming the field, 404 for another user's item, 409 past MAX_MEMORY_ITEMS", async () => {
    const { token } = await server.guest();
    const first = await call(token, '/api/memory', { method: 'POST', json: { text: '  The user is vegetarian.  ' } });
    expect(first.status).toBe(201);
    const item = first.body as SavedMemoryDto;
    expect(item).toMatchObject({ text: 'The user is vegetarian.', source: null, inContext: true });
    const second = (await call(token, '/api/memory', { method: 'POST', json: { text: 'The user lives in Porto.' } }))
      .body as SavedMemoryDto;
    expect((await list(token)).map((entry) => entry.id)).toEqual([second.id, item.id]);

    const edited = await call(token, `/api/memory/${item.id}`, {
      method: 'PATCH',
      json: { text: 'The user is vegan.' },
    });
    expect(edited.status).toBe(200);
    expect(edited.body).toMatchObject({ id: item.id, text: 'The user is vegan.' });

    for (const text of ['', '   ', 'x'.repeat(1001)]) {
      const refused = await call(token, '/api/memory', { method: 'POST', json: { text } });
      expect(refused.status).toBe(400);
      expect((refused.body as { error: { code: string; message: string } }).error).toMatchObject({
        code: 'VALIDATION',
      });
      expect((refused.body as { error: { message: string } }).error.message).toMatch(/\btext\b/);
    }
    expect((await call(token, '/api/memory', { method: 'POST', json: {} })).status).toBe(400);
    expect((await call(token, '/api/memory', { method: 'POST', json: { text: 'x'.repeat(1000) } })).status).toBe(201);

    const stranger = await server.guest();
    expect(
      (await call(stranger.token, `/api/memory/${item.id}`, { method: 'PATCH', json: { text: 'mine now' } })).status,
    ).toBe(404);
    expect((await call(stranger.token, `/api/memory/${item.id}`, { method: 'DELETE' })).status).toBe(404);
    expect(await list(stranger.token)).toEqual([]);
    expect((await list(token)).find((entry) => entry.id === item.id)?.text).toBe('The user is vegan.');

    // MAX_MEMORY_ITEMS is 4 here: the user has 3.
    expect((await call(token, '/api/memory', { method: 'POST', json: { text: 'Fourth.' } })).status).toBe(201);
    const over = await call(token, '/api/memory', { method: 'POST', json: { text: 'Fifth.' } });
    expect(over.status).toBe(409);
    expect((over.body as { error: { code: string } }).error.code).toBe('QUOTA_EXCEEDED');

    expect((await call(token, `/api/memory/${item.id}`, { method: 'DELETE' })).status).toBe(204);
    expect((await call(token, `/api/memory/${item.id}`, { method: 'DELETE' })).status).toBe(404);
    expect((await list(token)).some((entry) => entry.id === item.id)).toBe(false);
  });

  it('writes are rate-limited per user (MEMORY_WRITES_PER_MINUTE)', async () => {
    const { token } = await server.guest();
    const created = (await call(token, '/api/memory', { method: 'POST', json: { text: 'Counting writes.' } }))
      .body as SavedMemoryDto;
    const statuses: number[] = [];
    for (let write = 0; write < 12; write += 1) {
      statuses.push(
        (
          await call(token, `/api/memory/${created.id}`, {
            method: 'PATCH',
            json: { text: `Counting writes ${write}.` },
          })
        ).status,
      );
    }
    expect(statuses.slice(0, 11).every((status) => status === 200)).toBe(true);
    expect(statuses.at(-1)).toBe(429);
  });

  it("an item reaches the model in every thread of its user (after the system prefix, before the summary), never another user's, and stops once deleted", async () => {
    const owner = await server.guest();
    const kit = memoryKit(server.app, owner.token);
    const item = (
      await call(owner.token, '/api/memory', { method: 'POST', json: { text: 'The locker code is LOCK-7741.' } })
    ).body as SavedMemoryDto;
    for (const title of ['first chat', 'second chat']) {
      const thread = await kit.createThread(title);
      const sent = await kit.send(thread.id, 'What is my locker code?');
      const system = leading(lastChat());
      expect(system).toContain(
        `${SAVED_MEMORIES_HEADING}\n${SAVED_MEMORIES_PREAMBLE}\n- "The locker code is LOCK-7741."`,
      );
      expect(system.indexOf(SAVED_MEMORIES_HEADING)).toBeGreaterThan(0);
      // What the model saw records the item.
      const answer = sent.messages.at(-1) as MessageDto;
      const seen = (await call(owner.token, `/api/threads/${thread.id}/messages/${answer.id}/context`))
        .body as MessageContextDto;
      expect(seen.savedMemories).toEqual([{ id: item.id, text: 'The locker code is LOCK-7741.' }]);
    }
    const stranger = await server.guest();
    const strangerKit = memoryKit(server.app, stranger.token);
    const elsewhere = await strangerKit.createThread();
    await strangerKit.send(elsewhere.id, 'What is my locker code?');
    expect(leading(lastChat())).not.toContain('LOCK-7741');

    expect((await call(owner.token, `/api/memory/${item.id}`, { method: 'DELETE' })).status).toBe(204);
    const later = await kit.createThread('after the delete');
    await kit.send(later.id, 'What is my locker code?');
    expect(leading(lastChat())).not.toContain('LOCK-7741');
    expect(leading(lastChat())).not.toContain(SAVED_MEMORIES_HEADING);
  });

  it('over USER_MEMORY_TOKENS the newest win: older items are listed with inContext false and stay out of the pack', async () => {
    const { token } = await server.guest();
    const kit = memoryKit(server.app, token);
    // About 40, 15 and 30 tokens under a cap of 60: the newest two fit, the oldest does not.
    const texts = [
      'Oldest fact: the cat is called Miso, she is nine years old, sleeps on the blue armchair by the window and refuses every brand of dry food except one from Lyon.',
      'Middle fact: the car is a green hatchback.',
      'Newest fact: the favourite tea is a smoky lapsang souchong, brewed for exactly three minutes in the morning.',
    ];
    for (const text of texts)
      expect((await call(token, '/api/memory', { method: 'POST', json: { text } })).status).toBe(201);
    const items = await list(token);
    expect(items.map((entry) => entry.text)).toEqual([...texts].reverse());
    expect(items[0]?.inContext).toBe(true);
    expect(items.at(-1)?.inContext).toBe(false);
    const thread = await kit.createThread();
    await kit.send(thread.id, 'Hello again.');
    const system = leading(lastChat());
    for (const entry of items) expect(system.includes(entry.text)).toBe(entry.inContext);
  });

  it('save_memory (SAVE_MEMORY_TOOL=on): the model saves what the user asked, its source is that message, the transcript says so, and forgetting the message takes the item', async () => {
    const { token } = await server.guest();
    const kit = memoryKit(server.app, token);
    const thread = await kit.createThread('passport');
    const sent = await kit.send(thread.id, 'Remember: The passport number is C4R55T901.');
    const asked = sent.userMessage;
    const items = await list(token);
    expect(items).toHaveLength(1);
    expect(items[0]).toMatchObject({
      text: 'The passport number is C4R55T901.',
      source: { threadId: thread.id, seq: asked.seq },
    });
    const transcript = await kit.transcript(thread.id);
    expect(
      transcript.some(
        (message) =>
          message.role === 'system' &&
          message.content === '[memory] Saved to your memories: "The passport number is C4R55T901."',
      ),
    ).toBe(true);

    const next = await kit.createThread('a new day');
    await kit.send(next.id, 'What is my passport number?');
    expect(leading(lastChat())).toContain('- "The passport number is C4R55T901."');

    const forgot = await call(token, `/api/threads/${thread.id}/messages/${asked.id}`, { method: 'DELETE' });
    expect(forgot.status).toBe(200);
    expect(await list(token)).toEqual([]);
    await kit.send(next.id, 'And now, what is my passport number?');
    expect(leading(lastChat())).not.toContain('C4R55T901');
  });
});
