import { describe, expect, it } from 'vitest';
import { RECALL_HEADING, REPLY_PRIMING_TOKENS } from '../../src/core/context';
import { wireContentText } from '../../src/llm/count-chat-tokens';
import type { AdminThreadDetailDto } from '../../src/shared/admin-api';
import type { ContextPackDto, MessageContextDto, MessageDto } from '../../src/shared/api';
import { replyWithText } from '../support/openai-stub';
import { classifyRequest, summaryResponder } from '../support/summary-stub';
import { useChatServer } from '../support/chat-server';
import { adminToken, memoryKit, query } from './memory-test-kit';

const SYSTEM_PROMPT = 'You are the test assistant of the manifest suite.';

describe('what the model saw, for any answer (GET /api/threads/:id/messages/:messageId/context)', () => {
  const server = useChatServer({
    stub: { classifyRequest, responder: summaryResponder({ chat: () => replyWithText('noted') }) },
    env: { SYSTEM_PROMPT, SUMMARY_TRIGGER: 'messages=6', SUMMARY_KEEP: 'messages=2' },
  });
  const kit = memoryKit(server);

  const seenBy = async (threadId: string, messageId: string, bearer = server.token): Promise<Response> =>
    server.app.api(`/api/threads/${threadId}/messages/${messageId}/context`, { token: bearer });
  const seen = async (threadId: string, messageId: string): Promise<MessageContextDto> => {
    const response = await seenBy(threadId, messageId);
    const text = await response.text();
    expect(response.status, text).toBe(200);
    return JSON.parse(text) as MessageContextDto;
  };
  const lastChatRequest = () => server.stub.requests.filter((request) => request.kind === 'chat').at(-1)!;

  it('serves, for an answer given after a fold, the summary revision, the window and pinned seqs and the figures the model really got', async () => {
    const thread = await kit.createThread();
    const first = await kit.send(thread.id, 'Keep this: the vault code is ORCA-77.');
    expect(
      (
        await server.app.api(`/api/threads/${thread.id}/messages/${first.userMessage.id}/pin`, {
          method: 'POST',
          token: server.token,
        })
      ).status,
    ).toBe(200);
    for (let turn = 1; turn <= 5; turn += 1) await kit.send(thread.id, `Turn ${turn}: CODE-${700 + turn} is noted.`);
    await kit.waitForFoldThrough(thread.id, 6);
    const asked = await kit.send(thread.id, 'Which codes did I give you?');
    const answer = asked.messages.at(-1)!;
    const request = lastChatRequest();

    const view = await seen(thread.id, answer.id);
    const detail = await kit.detail(thread.id);
    const revision = detail.context.revision;
    expect(revision).toBeGreaterThanOrEqual(1);
    expect(view.summary?.revision).toBe(revision);
    expect(view.summary?.redacted).toBe(false);
    // The revision's text is what the leading system message carried.
    const leading = wireContentText(request.body.messages[0]!.content);
    expect(leading.startsWith(SYSTEM_PROMPT)).toBe(true);
    expect(leading).toContain(view.summary!.text!);
    expect(view.summary!.text).toContain('CODE-701');
    // The owner gets the system prompt's hash and size, never its text (the operator's instructions).
    expect(view.systemPrefix).toEqual({
      hash: expect.stringMatching(/^[0-9a-f]{64}$/),
      text: null,
      tokens: expect.any(Number),
    });
    expect(view.systemPrefix!.tokens).toBeGreaterThan(0);
    expect(JSON.stringify(view)).not.toContain(SYSTEM_PROMPT);

    // The window seqs are exactly the transcript messages the request carried after the pinned one.
    const transcript = await kit.transcript(thread.id);
    const bySeq = new Map(transcript.map((message) => [message.seq, message]));
    // (After the pinned one comes the auto-recall slot, the messages listed as recalled, then the window.)
    const texts = request.body.messages.slice(2).map((message) => wireContentText(message.content));
    const carried = texts.filter((text) => !text.startsWith(RECALL_HEADING));
    expect(texts.length - carried.length).toBe(view.recalledSeqs.length > 0 ? 1 : 0);
    expect(view.windowSeqs.map((seq) => bySeq.get(seq)?.content)).toEqual(carried);
    expect(view.windowSeqs.at(-1)).toBe(asked.userMessage.seq);
    expect(view.windowSeqs.every((seq) => seq > view.summary!.throughSeq)).toBe(true);
    expect(view.pinnedSeqs).toEqual([first.userMessage.seq]);
    expect(view.messages.find((message) => message.place === 'pinned')).toMatchObject({
      seq: first.userMessage.seq,
      content: 'Keep this: the vault code is ORCA-77.',
      forgotten: false,
    });

    // Our estimate beside the provider's figure (the stub reports usage), and the parts add up to the estimate.
    expect(view.reportedPromptTokens).toBe(request.promptTokens);
    expect(view.estimatedPromptTokens).toBeGreaterThan(0);
    const parts = view.parts!;
    expect(
      parts.systemPrefix +
        parts.summary +
        parts.pinned +
        parts.window +
        (parts.recall ?? 0) +
        parts.notes +
        parts.priming +
        parts.toolSchemas,
    ).toBe(view.estimatedPromptTokens);
    expect(parts.summary).toBeGreaterThan(0);
    expect(parts.pinned).toBeGreaterThan(0);

    // Every stored answer of the thread has its manifest; the system prefix is stored once for all of them.
    const answers = transcript.filter(
      (message: MessageDto) => message.role === 'assistant' && message.status === 'complete',
    );
    expect(answers.length).toBe(7);
    for (const stored of answers) expect((await seenBy(thread.id, stored.id)).status).toBe(200);
    const prefixes = await query<{ n: number }>(server.app, 'SELECT count(*)::int AS n FROM system_prefixes');
    expect(prefixes[0]?.n).toBe(1);
    const withoutManifest = await query<{ n: number }>(
      server.app,
      `SELECT count(*)::int AS n FROM messages m WHERE m.thread_id = $1 AND m.role = 'assistant'
      AND NOT EXISTS (SELECT 1 FROM model_calls c WHERE c.message_id = m.id AND c.system_prefix_hash IS NOT NULL)`,
      [thread.id],
    );
    expect(withoutManifest[0]?.n).toBe(0);

    // An admin sees the same plus the system prompt's text, through the admin API (the console) and an admin JWT.
    const asAdmin = { ...view, systemPrefix: { ...view.systemPrefix!, text: SYSTEM_PROMPT } };
    const admin = await server.app.api(`/api/admin/threads/${thread.id}/messages/${answer.id}/context`, {
      token: 'test-admin-token-0123456789',
    });
    expect(admin.status).toBe(200);
    expect(await admin.json()).toEqual(asAdmin);
    const byAdminJwt = await seenBy(thread.id, answer.id, await adminToken(server.app));
    expect(byAdminJwt.status).toBe(200);
    expect(await byAdminJwt.json()).toEqual(asAdmin);
  });

  it('previews the next call to the owner with the system prompt hidden (hash and tokens) and the summary split from it; admins get its text', async () => {
    const thread = await kit.createThread();
    for (let turn = 1; turn <= 6; turn += 1) await kit.send(thread.id, `Turn ${turn}: CODE-${300 + turn} is noted.`);
    await kit.waitForFoldThrough(thread.id, 6);
    const response = await server.app.api(`/api/threads/${thread.id}/context`, { token: server.token });
    const text = await response.text();
    expect(response.status, text).toBe(200);
    expect(text).not.toContain(SYSTEM_PROMPT);
    const pack = JSON.parse(text) as ContextPackDto;
    const [prompt, summary] = pack.messages;
    expect(prompt).toEqual({
      role: 'system',
      content: '',
      tokens: expect.any(Number),
      systemPrompt: { hash: expect.stringMatching(/^[0-9a-f]{64}$/), hidden: true },
    });
    expect(prompt!.tokens).toBeGreaterThan(0);
    // The owner's summary is still shown, in an entry of its own.
    expect(summary?.role).toBe('system');
    expect(summary?.content).toContain(pack.summary!.text);
    expect(summary?.content).toMatch(/^## Summary of the conversation so far/);
    expect(summary?.systemPrompt).toBeUndefined();
    const admin = await server.app.api(`/api/admin/threads/${thread.id}`, { token: 'test-admin-token-0123456789' });
    const adminPack = ((await admin.json()) as AdminThreadDetailDto).pack;
    expect(adminPack.messages[0]).toEqual({
      ...prompt,
      content: SYSTEM_PROMPT,
      systemPrompt: { hash: prompt!.systemPrompt!.hash, hidden: false },
    });
    expect(adminPack.messages.slice(1)).toEqual(pack.messages.slice(1));
    expect(adminPack.tokens).toBe(pack.tokens);
    // The split keeps the figures: the entries still add up to what the call costs.
    expect(pack.messages.reduce((sum, entry) => sum + entry.tokens, 0) + REPLY_PRIMING_TOKENS).toBe(pack.tokens);
  });

  it('shows a message forgotten since as forgotten, without its content, and answers 404 where no call produced the message', async () => {
    const thread = await kit.createThread();
    const secret = await kit.send(thread.id, 'My locker combination is 31-07-19.');
    const asked = await kit.send(thread.id, 'Thanks, that is all.');
    const answer = asked.messages.at(-1)!;
    expect(
      (await seen(thread.id, answer.id)).messages.find((message) => message.seq === secret.userMessage.seq)?.content,
    ).toBe('My locker combination is 31-07-19.');

    expect(
      (
        await server.app.api(`/api/threads/${thread.id}/messages/${secret.userMessage.id}?only=true`, {
          method: 'DELETE',
          token: server.token,
        })
      ).status,
    ).toBe(200);
    const after = await seen(thread.id, answer.id);
    expect(after.windowSeqs).toContain(secret.userMessage.seq);
    expect(after.messages.find((message) => message.seq === secret.userMessage.seq)).toMatchObject({
      forgotten: true,
      content: null,
    });
    expect(JSON.stringify(after)).not.toContain('31-07-19');

    // A user message has no call; another user's thread is a 404 like a missing one.
    const userMessage = await seenBy(thread.id, asked.userMessage.id);
    expect(userMessage.status).toBe(404);
    expect(((await userMessage.json()) as { error: { code: string } }).error.code).toBe('NOT_FOUND');
    const stranger = await server.guest();
    expect((await seenBy(thread.id, answer.id, stranger.token)).status).toBe(404);
    expect((await seenBy(thread.id, 'not-a-uuid')).status).toBe(400);
  });
});
