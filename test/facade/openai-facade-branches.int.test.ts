import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { describe, expect, it } from 'vitest';
import type { MessageDto } from '../../src/shared/api';
import { useChatServer } from '../support/chat-server';
import { chatRequests, openaiClient, requestText, SERVICE_KEY, streamTurn } from './facade-kit';

const server = useChatServer({ env: { OPENAI_FACADE_KEYS: SERVICE_KEY, MAX_THREADS_PER_USER: '3' } });

async function messagesOf(threadId: string, token: string): Promise<MessageDto[]> {
  const response = await server.app.api(`/api/threads/${threadId}/messages?limit=100`, { token });
  expect(response.status).toBe(200);
  return ((await response.json()) as { messages: MessageDto[] }).messages;
}

async function threadCount(token: string): Promise<number> {
  return ((await (await server.app.api('/api/threads', { token })).json()) as { threads: unknown[] }).threads.length;
}

/** Sends `texts` one by one as a client would (whole history each time); returns the history and the thread id. */
async function converse(
  client: ReturnType<typeof openaiClient>,
  texts: string[],
  headers: Record<string, string> = {},
) {
  const history: ChatCompletionMessageParam[] = [];
  let threadId: string | null = null;
  for (const text of texts) {
    const result = await streamTurn(client, history, text, headers);
    threadId ??= result.threadId;
    history.push({ role: 'user', content: text }, { role: 'assistant', content: result.answer });
  }
  return { history, threadId: threadId! };
}

describe('branches and conversations of the OpenAI-compatible route', () => {
  it('regenerating an earlier answer continues on a fork through it; the original keeps its answers', async () => {
    const guest = await server.guest();
    const client = openaiClient(server, { apiKey: guest.token });
    const headers = { 'X-Thread-Id': 'regen-earlier' };
    const { history, threadId } = await converse(client, ['alpha', 'beta'], headers);
    server.stub.reset();
    const again = await streamTurn(client, [], 'alpha', headers);
    expect(again.threadId).not.toBe(threadId);
    expect(again.answer).toBe('stub reply to: alpha');
    expect(requestText(chatRequests(server)[0]!)).not.toContain('beta');
    expect((await messagesOf(threadId, guest.token)).map((message) => message.content)).toEqual(
      history.map((message) => message.content),
    );
    expect(
      (await messagesOf(again.threadId!, guest.token))
        .filter((message) => !message.superseded)
        .map((message) => message.content),
    ).toEqual(['alpha', 'stub reply to: alpha']);
  });

  it('without a conversation id, a history is continued in the thread its messages match', async () => {
    const guest = await server.guest();
    const client = openaiClient(server, { apiKey: guest.token });
    const { history, threadId } = await converse(client, ['no id here', 'still no id']);
    expect((await messagesOf(threadId, guest.token)).map((message) => message.content)).toEqual(
      history.map((message) => message.content),
    );
    // A second chat opening with the same words is another conversation.
    const other = await streamTurn(client, [], 'no id here');
    expect(other.threadId).not.toBe(threadId);
    expect(await threadCount(guest.token)).toBe(2);
  });

  it("Open WebUI's forwarded headers name the user and the chat", async () => {
    const webui = openaiClient(server, {
      apiKey: SERVICE_KEY,
      headers: { 'X-OpenWebUI-User-Id': 'webui-user-1', 'X-OpenWebUI-Chat-Id': 'chat-42' },
    });
    const first = await converse(webui, ['from open webui', 'second message']);
    const same = await streamTurn(webui, first.history, 'third message');
    expect(same.threadId).toBe(first.threadId);
    const otherUser = openaiClient(server, {
      apiKey: SERVICE_KEY,
      headers: { 'X-OpenWebUI-User-Id': 'webui-user-2', 'X-OpenWebUI-Chat-Id': 'chat-42' },
    });
    expect((await streamTurn(otherUser, [], 'from open webui')).threadId).not.toBe(first.threadId);
  });

  it("the client's system message is the thread's instructions after our prefix; another one replaces them", async () => {
    const guest = await server.guest();
    const client = openaiClient(server, { apiKey: guest.token });
    const headers = { 'X-Thread-Id': 'instructions' };
    const first = await streamTurn(client, [{ role: 'system', content: 'Speak French.' }], 'hello', headers);
    const system = () => String(chatRequests(server).at(-1)?.body.messages[0]?.content);
    expect(system()).toMatch(/[\s\S]+\n\nInstructions from the application this chat runs in:\nSpeak French\.$/);
    const history: ChatCompletionMessageParam[] = [
      { role: 'user', content: 'hello' },
      { role: 'assistant', content: first.answer },
    ];
    await streamTurn(client, [{ role: 'system', content: 'Speak German.' }, ...history], 'again', headers);
    expect(system()).toContain('Speak German.');
    expect(system()).not.toContain('Speak French.');
    await streamTurn(
      client,
      [...history, { role: 'user', content: 'again' }, { role: 'assistant', content: 'stub reply to: again' }],
      'no system now',
      headers,
    );
    expect(system()).not.toContain('Instructions from the application');
  });

  it('an edit past MAX_THREADS_PER_USER is refused with 409 quota_exceeded and stores nothing', async () => {
    const guest = await server.guest();
    const client = openaiClient(server, { apiKey: guest.token });
    const headers = { 'X-Thread-Id': 'quota' };
    const { history, threadId } = await converse(client, ['one', 'two'], headers);
    for (const title of ['b', 'c'])
      await server.app.api('/api/threads', { method: 'POST', token: guest.token, json: { title } });
    expect(await threadCount(guest.token)).toBe(3);
    await expect(streamTurn(client, history.slice(0, 2), 'two, edited', headers)).rejects.toMatchObject({
      status: 409,
      code: 'quota_exceeded',
    });
    expect(await threadCount(guest.token)).toBe(3);
    expect((await messagesOf(threadId, guest.token)).map((message) => message.content)).toEqual(
      history.map((message) => message.content),
    );
  });
});
