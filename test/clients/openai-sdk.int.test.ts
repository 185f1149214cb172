import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { useChatServer } from '../support/chat-server';
import { replyWithError } from '../support/openai-stub';
import { summaryResponder } from '../support/summary-stub';
import { openaiClient } from '../facade/facade-kit';
import {
  chatPacks,
  codeAwareChat,
  FOLDING_SERVER,
  packText,
  threadCount,
  threadMessages,
  threadOfConversation,
} from './clients-kit';

// The official `openai` SDK (v6) against /v1/responses and /v1/conversations, as an application would use it.
const server = useChatServer(FOLDING_SERVER);

const TURNS = 30;

describe('the openai SDK over previous_response_id', () => {
  it(
    `a ${TURNS}-turn chat keeps the packs bounded with the summary and still answers a detail of the first turn`,
    { timeout: 180_000 },
    async () => {
      const client = openaiClient(server);
      const before = chatPacks(server).length;
      let previous: string | undefined;
      let threadId: string | null = null;
      for (let turn = 1; turn <= TURNS; turn += 1) {
        const text = turn === 1 ? 'Remember the code CODE-3141 for later.' : `Turn ${turn} of the long chat.`;
        const { data: answer, response } = await client.responses
          .create({ model: 'gpt-4o-mini', input: text, previous_response_id: previous })
          .withResponse();
        expect(answer.output_text).toBe(`stub reply to: ${text}`);
        threadId ??= response.headers.get('x-chat-thread-id');
        expect(response.headers.get('x-chat-thread-id')).toBe(threadId);
        previous = answer.id;
      }
      const final = await client.responses.create({
        model: 'gpt-4o-mini',
        input: 'Which code did I give you first?',
        previous_response_id: previous,
      });
      expect(final.output_text).toContain('CODE-3141');
      const packs = chatPacks(server).slice(before);
      expect(packs).toHaveLength(TURNS + 1);
      // Bounded: the summary and a short window, however long the chat grew.
      expect(Math.max(...packs.map((pack) => pack.body.messages.length))).toBeLessThanOrEqual(16);
      expect(packText(packs.at(-1)!)).toContain('Intent: testing long chats.');
      expect(packText(packs.at(-1)!)).not.toContain('Remember the code');
      // The transcript keeps every message.
      expect(await threadMessages(server, threadId!)).toHaveLength(2 * (TURNS + 1));
    },
  );

  it('naming an older answer answers on a fork without the later turns; the original branch keeps every message', async () => {
    const client = openaiClient(server);
    const first = await client.responses.create({ model: 'gpt-4o-mini', input: 'fork point one' });
    const later = await client.responses
      .create({ model: 'gpt-4o-mini', input: 'later turn two', previous_response_id: first.id })
      .withResponse();
    const original = later.response.headers.get('x-chat-thread-id')!;
    const forked = await client.responses
      .create({ model: 'gpt-4o-mini', input: 'other turn three', previous_response_id: first.id })
      .withResponse();
    expect(forked.data.output_text).toBe('stub reply to: other turn three');
    const forkId = forked.response.headers.get('x-chat-thread-id')!;
    expect(forkId).not.toBe(original);
    expect(packText(chatPacks(server).at(-1)!)).toContain('fork point one');
    expect(packText(chatPacks(server).at(-1)!)).not.toContain('later turn two');
    const contents = async (threadId: string) =>
      (await threadMessages(server, threadId)).map((message) => message.content);
    expect(await contents(original)).toEqual([
      'fork point one',
      'stub reply to: fork point one',
      'later turn two',
      'stub reply to: later turn two',
    ]);
    expect(await contents(forkId)).toEqual([
      'fork point one',
      'stub reply to: fork point one',
      'other turn three',
      'stub reply to: other turn three',
    ]);
  });
});

describe('the openai SDK on stored responses', () => {
  it('streams, retrieves, lists input items, counts input tokens and deletes', async () => {
    const client = openaiClient(server);
    const streamed = await client.responses.stream({ model: 'gpt-4o-mini', input: 'stream this one' }).finalResponse();
    expect(streamed.output_text).toBe('stub reply to: stream this one');
    const events: string[] = [];
    for await (const event of await client.responses.create({
      model: 'gpt-4o-mini',
      input: 'and stream on',
      previous_response_id: streamed.id,
      stream: true,
    }))
      events.push(event.type);
    expect(events[0]).toBe('response.created');
    expect(events.at(-1)).toBe('response.completed');

    const retrieved = await client.responses.retrieve(streamed.id);
    expect(retrieved).toMatchObject({ id: streamed.id, status: 'completed' });
    expect(retrieved.output_text).toBe('stub reply to: stream this one');
    const items: OpenAI.Responses.ResponseItem[] = [];
    for await (const item of client.responses.inputItems.list(streamed.id)) items.push(item);
    expect(items).toMatchObject([{ type: 'message', role: 'user', content: [{ text: 'stream this one' }] }]);
    const counted = await client.responses.inputTokens.count({
      model: 'gpt-4o-mini',
      input: 'how many tokens is this?',
      previous_response_id: streamed.id,
    });
    expect(counted.input_tokens).toBeGreaterThan(10);

    await client.responses.delete(streamed.id);
    await expect(client.responses.retrieve(streamed.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
  });
});

describe('the openai SDK on conversations', () => {
  it('creates, retrieves, lists the items of and deletes a conversation', async () => {
    const client = openaiClient(server);
    const conversation = await client.conversations.create({});
    expect(await client.conversations.retrieve(conversation.id)).toMatchObject({ id: conversation.id });
    for (const text of ['conversation one', 'conversation two'])
      await client.responses.create({ model: 'gpt-4o-mini', input: text, conversation: conversation.id });
    const listed: string[] = [];
    for await (const item of client.conversations.items.list(conversation.id, { order: 'asc', limit: 1 }))
      if (item.type === 'message') listed.push(item.content.map((part) => ('text' in part ? part.text : '')).join(''));
    expect(listed).toEqual([
      'conversation one',
      'stub reply to: conversation one',
      'conversation two',
      'stub reply to: conversation two',
    ]);
    expect(await client.conversations.delete(conversation.id)).toMatchObject({ deleted: true });
    await expect(client.conversations.retrieve(conversation.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await expect(threadMessages(server, threadOfConversation(conversation.id))).rejects.toThrow(/404/);
  });
});

describe("another user, and errors in OpenAI's shape through the SDK's classes", () => {
  it('a stranger reaches nothing of the first user; every refusal is the SDK error it should be', async () => {
    const client = openaiClient(server);
    const mine = await client.responses.create({ model: 'gpt-4o-mini', input: 'private detail CODE-2718' });
    const conversation = await client.conversations.create({});
    const stranger = await server.guest();
    const theirs = openaiClient(server, { apiKey: stranger.token });

    const notFound = await theirs.responses
      .create({ model: 'gpt-4o-mini', input: 'go on', previous_response_id: mine.id })
      .catch((error: unknown) => error);
    expect(notFound).toBeInstanceOf(OpenAI.BadRequestError);
    expect(notFound).toMatchObject({
      status: 400,
      code: 'previous_response_not_found',
      param: 'previous_response_id',
      type: 'invalid_request_error',
    });
    await expect(theirs.responses.retrieve(mine.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await expect(theirs.responses.delete(mine.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await expect(theirs.responses.inputItems.list(mine.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await expect(theirs.conversations.retrieve(conversation.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await expect(theirs.conversations.items.list(conversation.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await expect(
      theirs.responses.create({ model: 'gpt-4o-mini', input: 'intrude', conversation: conversation.id }),
    ).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    expect(await threadCount(server, stranger.token)).toBe(0);
    expect(packText(chatPacks(server).at(-1)!)).toContain('CODE-2718');

    // A bad key, a bad request and an upstream failure, each in OpenAI's error shape.
    const anonymous = openaiClient(server, { apiKey: 'not-a-token' });
    await expect(anonymous.responses.create({ model: 'gpt-4o-mini', input: 'x' })).rejects.toBeInstanceOf(
      OpenAI.AuthenticationError,
    );
    await expect(
      client.responses.create({
        model: 'gpt-4o-mini',
        input: 'x',
        previous_response_id: mine.id,
        conversation: 'conv_1',
      }),
    ).rejects.toBeInstanceOf(OpenAI.BadRequestError);
    server.stub.setResponder(() => replyWithError(500, { message: 'upstream broke' }));
    try {
      const failed = await client.responses.create({ model: 'gpt-4o-mini', input: 'fail' }).catch((error) => error);
      expect(failed).toBeInstanceOf(OpenAI.APIError);
      expect((failed as InstanceType<typeof OpenAI.APIError>).status).toBeGreaterThanOrEqual(500);
      expect((failed as InstanceType<typeof OpenAI.APIError>).error).toMatchObject({ message: expect.any(String) });
    } finally {
      server.stub.setResponder(summaryResponder({ chat: codeAwareChat }));
    }
  });
});
