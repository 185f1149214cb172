import { describe, expect, it } from 'vitest';
import { serviceUserId } from '../../src/http/openai-facade/facade-principal';
import { useChatServer } from '../support/chat-server';
import { adminToken, query } from '../memory/memory-test-kit';
import { chatRequests, openaiClient, requestText, SERVICE_KEY, streamTurn } from './facade-kit';

const server = useChatServer({ env: { OPENAI_FACADE_KEYS: SERVICE_KEY } });

const ownedThreads = async (userId: string) =>
  (await query<{ id: string }>(server.app, 'SELECT id::text FROM threads WHERE owner_id = $1', [userId])).map(
    (row) => row.id,
  );
const userRows = async (userId: string) =>
  (await query(server.app, 'SELECT 1 FROM users WHERE id = $1', [userId])).length;

/** An erased user must not come back through /v1 (issue 27): the tombstone holds there as on /api. */
describe('the OpenAI-compatible route after an erasure', () => {
  it("an erased guest's old token is refused on /v1 (401 in OpenAI's shape) and brings nothing back", async () => {
    const { userId, token } = await server.guest();
    const client = openaiClient(server, { apiKey: token });
    await streamTurn(client, [], 'guest detail GUEST-77');
    expect((await server.app.api('/api/me', { method: 'DELETE', token })).status).toBe(204);

    await expect(streamTurn(client, [], 'hello after erasure')).rejects.toMatchObject({
      status: 401,
      code: 'invalid_api_key',
    });
    await expect(client.models.list()).rejects.toMatchObject({ status: 401 });
    expect(await userRows(userId)).toBe(0);
    expect(await ownedThreads(userId)).toEqual([]);
  });

  it("a host-minted user's token issued before the erasure is refused on /v1; one issued after starts an empty user", async () => {
    const userId = `facade-host-${Date.now()}`;
    const old = await server.app.application.deps.tokens.sign({ userId, kind: 'external' });
    await streamTurn(openaiClient(server, { apiKey: old }), [], 'host detail HOST-88', { 'X-Thread-Id': 'c1' });
    expect(
      (
        await server.app.api(`/api/admin/users/${encodeURIComponent(userId)}`, {
          method: 'DELETE',
          token: await adminToken(server.app),
        })
      ).status,
    ).toBe(204);

    await expect(
      streamTurn(openaiClient(server, { apiKey: old }), [], 'again', { 'X-Thread-Id': 'c1' }),
    ).rejects.toMatchObject({ status: 401 });
    expect(await userRows(userId)).toBe(0);
    await new Promise((resolve) => setTimeout(resolve, 1100)); // iat has seconds
    const later = await server.app.application.deps.tokens.sign({ userId, kind: 'external' });
    server.stub.reset();
    const fresh = await streamTurn(openaiClient(server, { apiKey: later }), [], 'a new start', { 'X-Thread-Id': 'c1' });
    expect(await ownedThreads(userId)).toEqual([fresh.threadId]);
    expect(chatRequests(server).map(requestText).join('\n')).not.toContain('HOST-88');
  });

  it("a service key's erased end user comes back only as a new, empty user: the erased conversation is not adopted again", async () => {
    const client = openaiClient(server, { apiKey: SERVICE_KEY, headers: { 'X-User-Id': 'dave' } });
    const userId = serviceUserId(SERVICE_KEY, 'dave');
    const headers = { 'X-Thread-Id': 'dave-chat' };
    const first = await streamTurn(client, [], 'dave detail SVC-99', headers);
    expect(await ownedThreads(userId)).toEqual([first.threadId]);
    expect(
      (
        await server.app.api(`/api/admin/users/${encodeURIComponent(userId)}`, {
          method: 'DELETE',
          token: await adminToken(server.app),
        })
      ).status,
    ).toBe(204);
    expect(await userRows(userId)).toBe(0);

    // The client resends the erased conversation: its answer is one this server no longer has, so it is refused.
    server.stub.reset();
    const history = [
      { role: 'user' as const, content: 'dave detail SVC-99' },
      { role: 'assistant' as const, content: first.answer },
    ];
    await expect(streamTurn(client, history, 'and now?', headers)).rejects.toMatchObject({ status: 400 });
    expect(await ownedThreads(userId)).toEqual([]);
    // A new conversation works (the process stored dave before the erasure: it must store him again), empty.
    const fresh = await streamTurn(client, [], 'a new chat', headers);
    expect(fresh.answer).toBe('stub reply to: a new chat');
    expect(await ownedThreads(userId)).toEqual([fresh.threadId]);
    expect(chatRequests(server).map(requestText).join('\n')).not.toContain('SVC-99');
  });
});
