import { describe, expect, it } from 'vitest';
import type { AuditPageDto } from '../../src/shared/admin-api';
import type { SendMessageResponseDto, ThreadDto } from '../../src/shared/api';
import { useChatServer } from '../support/chat-server';
import { replyWithText } from '../support/openai-stub';
import { adminToken } from '../memory/memory-test-kit';

const ADMIN_TOKEN = 'test-admin-token-0123456789';

describe('admin-role actions through user routes are audited', () => {
  const server = useChatServer({ stub: { responder: () => replyWithText('noted') } });

  async function auditOf(threadId: string): Promise<AuditPageDto['entries']> {
    const response = await server.app.api(`/api/admin/audit?threadId=${threadId}&limit=100`, { token: ADMIN_TOKEN });
    expect(response.status).toBe(200);
    return ((await response.json()) as AuditPageDto).entries;
  }

  it("records export, pin, unpin, settings, reset, undo, forget and regenerate by an admin JWT on another user's thread", async () => {
    const owner = await server.guest();
    const thread = (await (
      await server.app.api('/api/threads', { method: 'POST', token: owner.token, json: { title: 'private' } })
    ).json()) as ThreadDto;
    const sent = async (content: string) => {
      const response = await server.app.api(`/api/threads/${thread.id}/messages`, {
        method: 'POST',
        token: owner.token,
        json: { content },
      });
      expect(response.status).toBe(201);
      return (await response.json()) as SendMessageResponseDto;
    };
    const first = await sent('First message.');
    await sent('Second message.');
    // The owner's own actions are not admin actions: nothing is audited for them.
    expect((await server.app.api(`/api/threads/${thread.id}/export?format=json`, { token: owner.token })).status).toBe(
      200,
    );
    expect(await auditOf(thread.id)).toEqual([]);

    const admin = await adminToken(server.app, 'admin-ops-7');
    const call = async (method: string, path: string, json?: unknown) => {
      const response = await server.app.api(`/api/threads/${thread.id}${path}`, {
        method,
        token: admin,
        ...(json !== undefined ? { json } : {}),
      });
      expect(response.status, `${method} ${path}: ${await response.clone().text()}`).toBeLessThan(300);
      await response.arrayBuffer();
    };
    await call('GET', '/export?format=markdown');
    await call('POST', `/messages/${first.userMessage.id}/pin`);
    await call('DELETE', `/messages/${first.userMessage.id}/pin`);
    await call('PATCH', '/settings', { keep: 'messages=4' });
    await call('POST', '/context-reset');
    await call('DELETE', '/context-reset');
    await call('POST', '/regenerate');
    await call('DELETE', `/messages/${first.userMessage.id}`);

    const entries = await auditOf(thread.id);
    expect(entries.map((entry) => entry.action).reverse()).toEqual([
      'thread.exported',
      'message.pinned',
      'message.unpinned',
      'thread.settings-changed',
      'context.reset',
      'context.reset-undone',
      'answer.regenerated',
      'message.forgotten',
    ]);
    for (const entry of entries) {
      expect(entry).toMatchObject({
        actor: 'admin-ops-7',
        threadId: thread.id,
        details: expect.objectContaining({ ownerId: owner.userId, via: 'user-route' }),
      });
    }
    expect(entries.find((entry) => entry.action === 'thread.exported')?.details).toMatchObject({ format: 'markdown' });
    expect(entries.find((entry) => entry.action === 'message.forgotten')?.details).toMatchObject({
      messageId: first.userMessage.id,
    });
  });

  it("records an admin reading another user's settings and what the model saw, through user and admin routes", async () => {
    const owner = await server.guest();
    const thread = (await (
      await server.app.api('/api/threads', { method: 'POST', token: owner.token, json: {} })
    ).json()) as ThreadDto;
    const sent = (await (
      await server.app.api(`/api/threads/${thread.id}/messages`, {
        method: 'POST',
        token: owner.token,
        json: { content: 'Hello.' },
      })
    ).json()) as SendMessageResponseDto;
    const answer = sent.messages.find((message) => message.role === 'assistant');
    expect(answer).toBeDefined();
    const read = async (path: string, token: string) => {
      const response = await server.app.api(path, { token });
      expect(response.status, `${path}: ${await response.clone().text()}`).toBe(200);
      await response.arrayBuffer();
    };
    // The owner reading their own: not audited.
    await read(`/api/threads/${thread.id}/settings`, owner.token);
    await read(`/api/threads/${thread.id}/messages/${answer?.id}/context`, owner.token);
    expect(await auditOf(thread.id)).toEqual([]);

    const admin = await adminToken(server.app, 'admin-reader-3');
    await read(`/api/threads/${thread.id}/settings`, admin);
    await read(`/api/threads/${thread.id}/messages/${answer?.id}/context`, admin);
    await read(`/api/admin/threads/${thread.id}/messages/${answer?.id}/context`, ADMIN_TOKEN);
    await read(`/api/admin/threads/${thread.id}`, ADMIN_TOKEN);

    const entries = (await auditOf(thread.id)).reverse();
    expect(entries.map((entry) => [entry.actor === 'admin-reader-3' ? 'jwt' : 'console', entry.action])).toEqual([
      ['jwt', 'thread.settings-viewed'],
      ['jwt', 'message-context.viewed'],
      ['console', 'message-context.viewed'],
      ['console', 'thread.viewed'],
    ]);
    for (const entry of entries) expect(entry.details).toMatchObject({ ownerId: owner.userId });
    expect(entries[1]?.details).toMatchObject({ messageId: answer?.id, via: 'user-route' });
  });

  it('does not audit an admin acting on their own thread, nor a refused attempt', async () => {
    const admin = await adminToken(server.app, 'admin-own-1');
    const thread = (await (
      await server.app.api('/api/threads', { method: 'POST', token: admin, json: {} })
    ).json()) as ThreadDto;
    expect((await server.app.api(`/api/threads/${thread.id}/export?format=json`, { token: admin })).status).toBe(200);
    const other = await server.guest();
    const otherThread = (await (
      await server.app.api('/api/threads', { method: 'POST', token: other.token, json: {} })
    ).json()) as ThreadDto;
    // Nothing to regenerate: refused, so nothing happened and nothing is recorded.
    expect(
      (await server.app.api(`/api/threads/${otherThread.id}/regenerate`, { method: 'POST', token: admin })).status,
    ).toBe(409);
    expect(await auditOf(thread.id)).toEqual([]);
    expect(await auditOf(otherThread.id)).toEqual([]);
  });
});
