import { describe, expect, it } from 'vitest';
import type { EditMessageResponseDto } from '../../src/shared/api';
import { useChatServer } from '../support/chat-server';
import { replyWithText } from '../support/openai-stub';
import { memoryKit, query } from '../memory/memory-test-kit';

/** An edit is a fork and a message in it: one transaction, one fork per client message id. */
describe('editing a message: the fork and its turn together', () => {
  const server = useChatServer({ stub: { responder: () => replyWithText('noted') } });
  const kit = memoryKit(server);
  const edit = (threadId: string, messageId: string, json: unknown) =>
    server.app.api(`/api/threads/${threadId}/messages/${messageId}/edit`, {
      method: 'POST',
      token: server.token,
      json,
    });
  const forksOf = async (parentId: string) =>
    (
      await query<{ id: string }>(server.app, 'SELECT id FROM threads WHERE forked_from_thread_id = $1', [parentId])
    ).map((row) => row.id);

  it('leaves no fork behind when the edited message cannot be stored', async () => {
    const parent = await kit.createThread('Atomic');
    await kit.send(parent.id, 'First question.');
    const second = await kit.send(parent.id, 'Second question.');
    // Fault injection in the real database: storing this one text fails inside the accept.
    await query(
      server.app,
      `
      CREATE OR REPLACE FUNCTION test_fail_accept() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN IF NEW.content = 'FAIL-THE-ACCEPT' THEN RAISE EXCEPTION 'injected failure'; END IF; RETURN NEW; END $$;
      DROP TRIGGER IF EXISTS test_fail_accept ON messages;
      CREATE TRIGGER test_fail_accept BEFORE INSERT ON messages FOR EACH ROW EXECUTE FUNCTION test_fail_accept();`,
    );
    try {
      const failed = await edit(parent.id, second.userMessage.id, { content: 'FAIL-THE-ACCEPT' });
      expect(failed.status).toBe(500);
      expect(await forksOf(parent.id)).toEqual([]);
    } finally {
      await query(server.app, 'DROP TRIGGER IF EXISTS test_fail_accept ON messages');
    }
    const ok = await edit(parent.id, second.userMessage.id, { content: 'Second question, edited.' });
    expect(ok.status).toBe(201);
    expect(await forksOf(parent.id)).toHaveLength(1);
  });

  it('makes one fork for concurrent edits with one client message id', async () => {
    const parent = await kit.createThread('Twice');
    await kit.send(parent.id, 'First question.');
    const second = await kit.send(parent.id, 'Second question with a typo.');
    const body = { content: 'Second question, fixed.', clientMessageId: `edit-${Date.now()}` };
    const responses = await Promise.all([0, 1, 2].map(() => edit(parent.id, second.userMessage.id, body)));
    expect(responses.map((response) => response.status).every((status) => status === 200 || status === 201)).toBe(true);
    const results = (await Promise.all(responses.map((response) => response.json()))) as EditMessageResponseDto[];
    const forks = await forksOf(parent.id);
    expect(forks).toHaveLength(1);
    expect(new Set(results.map((result) => result.thread.id))).toEqual(new Set(forks));
    const stored = await query<{ count: number }>(
      server.app,
      'SELECT count(*)::int AS count FROM messages WHERE client_message_id = $1',
      [body.clientMessageId],
    );
    expect(stored[0]?.count).toBe(1);
  });
});
