import { ChatOpenAI } from '@langchain/openai';
import { describe, expect, it } from 'vitest';
import { useChatServer } from '../support/chat-server';
import { chatPacks, FOLDING_SERVER, packText } from './clients-kit';

// LangChain's ChatOpenAI with useResponsesApi: true against the server's /v1/responses.
const server = useChatServer(FOLDING_SERVER);

function model(headers: Record<string, string> = {}) {
  return new ChatOpenAI({
    model: 'gpt-4o-mini',
    apiKey: server.token,
    useResponsesApi: true,
    maxRetries: 0,
    configuration: { baseURL: `${server.app.baseUrl}/v1`, defaultHeaders: headers },
  });
}

describe('LangChain ChatOpenAI with useResponsesApi', () => {
  it('invoke and stream answer; the whole history each time reconciles onto one thread by its key', async () => {
    const chat = model({ 'X-Thread-Id': 'langchain-responses-1' });
    const first = await chat.invoke([
      ['system', 'You are terse.'],
      ['human', 'Remember the code CODE-8080.'],
    ]);
    expect(first.text).toBe('stub reply to: Remember the code CODE-8080.');
    expect(first.response_metadata.id ?? first.id).toMatch(/^resp_/);
    expect(first.usage_metadata?.input_tokens).toBe(chatPacks(server).at(-1)?.promptTokens);
    let streamed = '';
    const stream = await chat.stream([
      ['system', 'You are terse.'],
      ['human', 'Remember the code CODE-8080.'],
      ['ai', first.text],
      ['human', 'Which code did I give you?'],
    ]);
    for await (const chunk of stream) streamed += chunk.text;
    expect(streamed).toBe('The codes I know: CODE-8080.');
    expect(String(chatPacks(server).at(-1)?.body.messages[0]?.content)).toContain('You are terse.');
    const threads = (
      (await (await server.app.api('/api/threads', { token: server.token })).json()) as { threads: unknown[] }
    ).threads;
    expect(threads).toHaveLength(1);
    expect(packText(chatPacks(server).at(-1)!)).toContain('stub reply to: Remember the code CODE-8080.');
  });
});
