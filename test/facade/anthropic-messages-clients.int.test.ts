import Anthropic from '@anthropic-ai/sdk';
import { createAnthropic } from '@ai-sdk/anthropic';
import { ChatAnthropic } from '@langchain/anthropic';
import { AIMessage, HumanMessage } from '@langchain/core/messages';
import { generateText, streamText } from 'ai';
import { describe, expect, it } from 'vitest';
import { useChatServer } from '../support/chat-server';
import { echoResponder, replyWithError, type StubResponder } from '../support/openai-stub';
import { anthropicClient, CLAUDE_MODEL, threadMessages } from './anthropic-kit';
import { chatRequests } from './facade-kit';

/** Echoes the user; "fail" makes the upstream fail. */
const responder: StubResponder = (request) => {
  if (/fail/.test(JSON.stringify(request.body.messages.at(-1))))
    return replyWithError(400, { message: 'upstream refused' });
  return echoResponder(request);
};

const server = useChatServer({
  stub: { responder },
  env: { RATE_LIMIT_PER_MINUTE: '4', FACADE_MAX_BODY_BYTES: '65536', FACADE_MODEL_ALIASES: CLAUDE_MODEL },
});

async function freshClient(): Promise<{ client: Anthropic; token: string }> {
  const guest = await server.guest();
  return { client: anthropicClient(server, { apiKey: guest.token }), token: guest.token };
}

describe('limits and failures of /v1/messages, in Anthropic shape', () => {
  it('a body over FACADE_MAX_BODY_BYTES is request_too_large (413)', async () => {
    const { client } = await freshClient();
    const refused = client.messages.create({
      model: CLAUDE_MODEL,
      max_tokens: 64,
      messages: [{ role: 'user', content: 'x'.repeat(70_000) }],
    });
    await expect(refused).rejects.toBeInstanceOf(Anthropic.APIError);
    await expect(refused).rejects.toMatchObject({ status: 413, error: { error: { type: 'request_too_large' } } });
  });

  it('the send rate limit is rate_limit_error (429) with Retry-After; nothing reaches the upstream', async () => {
    const { client } = await freshClient();
    for (let index = 0; index < 4; index += 1)
      await client.messages.create(
        { model: CLAUDE_MODEL, max_tokens: 64, messages: [{ role: 'user', content: `message ${index}` }] },
        { headers: { 'X-Thread-Id': `rate-${index}` } },
      );
    const refused = await client.messages
      .create(
        { model: CLAUDE_MODEL, max_tokens: 64, messages: [{ role: 'user', content: 'one too many' }] },
        { headers: { 'X-Thread-Id': 'rate-x' } },
      )
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(Anthropic.RateLimitError);
    expect(refused).toMatchObject({ error: { type: 'error', error: { type: 'rate_limit_error' } } });
    expect(Number((refused as InstanceType<typeof Anthropic.APIError>).headers?.get('retry-after'))).toBeGreaterThan(0);
    expect(chatRequests(server).some((request) => JSON.stringify(request.body).includes('one too many'))).toBe(false);
  });

  it('an upstream failure: api_error as JSON, and an error event once the stream is open', async () => {
    const { client } = await freshClient();
    await expect(
      client.messages.create(
        { model: CLAUDE_MODEL, max_tokens: 64, messages: [{ role: 'user', content: 'please fail' }] },
        { headers: { 'X-Thread-Id': 'fail-json' } },
      ),
    ).rejects.toMatchObject({ status: 502, error: { error: { type: 'api_error' } } });
    const stream = client.messages.stream(
      { model: CLAUDE_MODEL, max_tokens: 64, messages: [{ role: 'user', content: 'please fail again' }] },
      { headers: { 'X-Thread-Id': 'fail-stream' } },
    );
    await expect(stream.finalMessage()).rejects.toMatchObject({
      error: { type: 'error', error: { type: 'api_error' } },
    });
  });
});

describe('auxiliary requests (FACADE_AUXILIARY_PREFIXES) on /v1/messages', () => {
  it('are answered statelessly, streamed or not: no thread, the conversation untouched', async () => {
    const { client, token } = await freshClient();
    const headers = { 'X-Thread-Id': 'aux-1' };
    const first = await client.messages.create(
      { model: CLAUDE_MODEL, max_tokens: 64, messages: [{ role: 'user', content: 'a real question' }] },
      { headers },
    );
    const task = '### Task: Write a title for this chat.';
    const { data: titled, response } = await client.messages
      .create({ model: CLAUDE_MODEL, max_tokens: 64, messages: [{ role: 'user', content: task }] }, { headers })
      .withResponse();
    expect(titled.content).toEqual([{ type: 'text', text: `stub reply to: ${task}` }]);
    expect(titled.stop_reason).toBe('end_turn');
    expect(response.headers.get('x-chat-thread-id')).toBeNull();
    const streamed = await client.messages
      .stream({ model: CLAUDE_MODEL, max_tokens: 64, messages: [{ role: 'user', content: task }] }, { headers })
      .finalMessage();
    expect(streamed.content).toEqual([{ type: 'text', text: `stub reply to: ${task}` }]);
    const threads = (await (await server.app.api('/api/threads', { token })).json()) as { threads: { id: string }[] };
    expect(threads.threads).toHaveLength(1);
    expect((await threadMessages(server, threads.threads[0]!.id, token)).map((message) => message.content)).toEqual([
      'a real question',
      `stub reply to: ${'a real question'}`,
    ]);
    expect(first.stop_reason).toBe('end_turn');
  });
});

describe("Claude Code's sizes", () => {
  it('a 27,000-character system prompt and a tool described in 18,780 characters are answered (the default limits)', async () => {
    const { client } = await freshClient();
    // Streamed, as Claude Code asks (the SDK refuses a non-streamed request this large).
    const answer = await client.messages
      .stream(
        {
          model: CLAUDE_MODEL,
          max_tokens: 32_000,
          system: [{ type: 'text', text: 'You are an agent. '.repeat(1500) }],
          tools: [{ name: 'Agent', description: 'Launch a sub-agent. '.repeat(939), input_schema: { type: 'object' } }],
          messages: [{ role: 'user', content: 'hello from a coding agent' }],
        },
        { headers: { 'X-Claude-Code-Session-Id': 'session-1' } },
      )
      .finalMessage();
    expect(answer.content).toEqual([{ type: 'text', text: 'stub reply to: hello from a coding agent' }]);
  });
});

describe("LangChain's ChatAnthropic and the AI SDK's @ai-sdk/anthropic in front", () => {
  it('ChatAnthropic (anthropicApiUrl = the server root): invoke, then stream the next turn of the same thread', async () => {
    const { token } = await freshClient();
    const model = new ChatAnthropic({
      model: CLAUDE_MODEL,
      apiKey: token,
      anthropicApiUrl: server.app.baseUrl,
      maxTokens: 256,
      maxRetries: 0,
      clientOptions: { defaultHeaders: { 'X-Thread-Id': 'langchain-1' } },
    });
    const first = await model.invoke([new HumanMessage('hello from langchain')]);
    expect(first.content).toBe('stub reply to: hello from langchain');
    let streamed = '';
    for await (const chunk of await model.stream([
      new HumanMessage('hello from langchain'),
      new AIMessage(String(first.content)),
      new HumanMessage('and a stream'),
    ]))
      streamed += typeof chunk.content === 'string' ? chunk.content : '';
    expect(streamed).toBe('stub reply to: and a stream');
    const threads = (await (await server.app.api('/api/threads', { token })).json()) as { threads: { id: string }[] };
    expect(threads.threads).toHaveLength(1);
    expect((await threadMessages(server, threads.threads[0]!.id, token)).map((message) => message.content)).toEqual([
      'hello from langchain',
      'stub reply to: hello from langchain',
      'and a stream',
      'stub reply to: and a stream',
    ]);
  });

  it('@ai-sdk/anthropic (baseURL = the server root + /v1): generateText and streamText', async () => {
    const { token } = await freshClient();
    const anthropic = createAnthropic({
      baseURL: `${server.app.baseUrl}/v1`,
      apiKey: token,
      headers: { 'X-Thread-Id': 'ai-sdk-1' },
    });
    const generated = await generateText({ model: anthropic(CLAUDE_MODEL), prompt: 'hello from the ai sdk' });
    expect(generated.text).toBe('stub reply to: hello from the ai sdk');
    expect(generated.finishReason).toBe('stop');
    expect(generated.usage.inputTokens).toBeGreaterThan(0);
    const streamed = streamText({
      model: anthropic(CLAUDE_MODEL),
      messages: [
        { role: 'user', content: 'hello from the ai sdk' },
        { role: 'assistant', content: generated.text },
        { role: 'user', content: 'streamed next' },
      ],
    });
    expect(await streamed.text).toBe('stub reply to: streamed next');
  });
});
