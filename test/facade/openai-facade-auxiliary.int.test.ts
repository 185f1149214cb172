import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { describe, expect, it } from 'vitest';
import type { CostReportDto } from '../../src/shared/admin-api';
import type { MessageDto } from '../../src/shared/api';
import { useChatServer } from '../support/chat-server';
import { chatRequests, openaiClient, streamTurn } from './facade-kit';

const SYSTEM_PROMPT = 'You are the assistant of the auxiliary suite.';
const ADMIN_TOKEN = 'test-admin-token-0123456789';
const server = useChatServer({ env: { RATE_LIMIT_PER_MINUTE: '6', SYSTEM_PROMPT } });

/** Open WebUI's title task as it sends it: one user message, the task template with an excerpt of the chat. */
const titleTask = (history: string) =>
  `### Task:\nGenerate a concise, 3-5 word title with an emoji summarizing the chat history.\n### Guidelines:\n- The title should clearly represent the main theme.\n### Output:\nJSON format: { "title": "your concise title here" }\n### Chat History:\n<chat_history>\n${history}\n</chat_history>`;
const tagsTask = (history: string) =>
  `### Task:\nGenerate 1-3 broad tags categorizing the main themes of the chat history.\n### Chat History:\n<chat_history>\n${history}\n</chat_history>`;

async function threadsOf(token: string): Promise<{ id: string }[]> {
  return ((await (await server.app.api('/api/threads', { token })).json()) as { threads: { id: string }[] }).threads;
}

async function contentsOf(threadId: string, token: string): Promise<string[]> {
  const response = await server.app.api(`/api/threads/${threadId}/messages?limit=100`, { token });
  return ((await response.json()) as { messages: MessageDto[] }).messages.map((message) => message.content);
}

describe('auxiliary requests of a chat UI (FACADE_AUXILIARY_PREFIXES)', () => {
  it("Open WebUI's title and tags tasks, sent with the chat's id, are answered as sent: no fork, nothing stored", async () => {
    const guest = await server.guest();
    const client = openaiClient(server, { apiKey: guest.token });
    const headers = { 'X-OpenWebUI-Chat-Id': 'webui-chat-7' };
    const history: ChatCompletionMessageParam[] = [];
    let threadId: string | null = null;
    for (const text of ['tell me about tulips', 'and about roses']) {
      const result = await streamTurn(client, history, text, headers);
      threadId ??= result.threadId;
      history.push({ role: 'user', content: text }, { role: 'assistant', content: result.answer });
    }
    const stored = await contentsOf(threadId!, guest.token);

    const title = titleTask('USER: tell me about tulips\nASSISTANT: stub reply to: tell me about tulips');
    const { data: completion, response } = await client.chat.completions
      .create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: title }] }, { headers })
      .withResponse();
    expect(completion.choices[0]?.message.content).toBe(`stub reply to: ${title}`);
    expect(response.headers.get('x-chat-thread-id')).toBeNull();
    const upstream = chatRequests(server).at(-1)!;
    // The operator's system prompt comes first, as in every turn.
    expect(upstream.body.messages).toEqual([
      { role: 'system', content: SYSTEM_PROMPT },
      { role: 'user', content: title },
    ]);
    expect(completion.usage?.prompt_tokens).toBe(upstream.promptTokens);

    const tags = await streamTurn(client, [], tagsTask('USER: and about roses'), headers);
    expect(tags.answer).toBe(`stub reply to: ${tagsTask('USER: and about roses')}`);
    expect(tags.threadId).toBeNull();
    expect(tags.usage?.prompt_tokens).toBe(chatRequests(server).at(-1)!.promptTokens);

    // A task about a chat never seen creates nothing either.
    await streamTurn(client, [], titleTask('USER: hi'), { 'X-OpenWebUI-Chat-Id': 'webui-chat-new' });
    expect((await threadsOf(guest.token)).map((thread) => thread.id)).toEqual([threadId]);
    expect(await contentsOf(threadId!, guest.token)).toEqual(stored);

    // The conversation goes on in its thread, unforked.
    const next = await streamTurn(client, history, 'and lilies?', headers);
    expect(next.threadId).toBe(threadId);
    expect(await contentsOf(threadId!, guest.token)).toEqual([...stored, 'and lilies?', 'stub reply to: and lilies?']);
  });

  it('spend the send limit, and a refused one reaches no model', async () => {
    const guest = await server.guest();
    const client = openaiClient(server, { apiKey: guest.token });
    const before = chatRequests(server).length;
    for (let index = 0; index < 6; index += 1) await streamTurn(client, [], titleTask(`USER: message ${index}`));
    await expect(streamTurn(client, [], titleTask('USER: one too many'))).rejects.toMatchObject({
      status: 429,
      code: 'rate_limit_exceeded',
    });
    expect(chatRequests(server).length - before).toBe(6);
    expect(await threadsOf(guest.token)).toEqual([]);
  });

  it("are recorded for the user: the admin's costs count them", async () => {
    const guest = await server.guest();
    const client = openaiClient(server, { apiKey: guest.token });
    const costs = async () =>
      (await (await server.app.api('/api/admin/costs?by=user', { token: ADMIN_TOKEN })).json()) as CostReportDto;
    const before = await costs();
    await streamTurn(client, [], titleTask('USER: what does a tulip cost?'));
    const after = await costs();
    expect(after.total.calls).toBe(before.total.calls + 1);
    expect(after.rows.find((row) => row.key === guest.userId)).toMatchObject({
      calls: 1,
      promptTokens: chatRequests(server).at(-1)!.promptTokens,
    });
  });

  it('over MAX_MESSAGE_CHARS are refused (413) and reach no model', async () => {
    const guest = await server.guest();
    const client = openaiClient(server, { apiKey: guest.token });
    const before = chatRequests(server).length;
    await expect(streamTurn(client, [], titleTask(`USER: ${'tulip '.repeat(7000)}`))).rejects.toMatchObject({
      status: 413,
    });
    expect(chatRequests(server).length).toBe(before);
  });
});
