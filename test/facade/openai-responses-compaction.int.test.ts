import type OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import type { MessageDto } from '../../src/shared/api';
import { CODEX_SUMMARY_OPENING } from '../../src/http/openai-responses/codex-local-summary';
import { useChatServer } from '../support/chat-server';
import { lastUserText, replyWithText, type StubResponder } from '../support/openai-stub';
import { classifyRequest, summaryResponder } from '../support/summary-stub';
import { chatRequests, openaiClient, requestText } from './facade-kit';

/** Echoes the user; asked "which code", answers with every CODE-n its pack holds; asked to summarize, a summary. */
const chat: StubResponder = (request) => {
  const text = lastUserText(request.body);
  if (/which code/i.test(text)) {
    const codes = [...new Set(requestText(request).match(/CODE-\d+/g) ?? [])];
    return replyWithText(`The codes I know: ${codes.join(', ') || 'none'}.`);
  }
  if (/summarize the conversation/i.test(text)) return replyWithText('HANDOFF: we planted CODE-77 and chatted.');
  return replyWithText(`stub reply to: ${text}`);
};

const server = useChatServer({
  stub: { classifyRequest, responder: summaryResponder({ chat }) },
  env: {
    SUMMARY_TRIGGER: 'messages=40',
    SUMMARY_KEEP: 'messages=2',
    SUMMARY_MAX_TOKENS: '200',
    RECALL_TOKENS: '0',
  },
});

const MODEL = 'gpt-4o-mini';

async function threadMessages(threadId: string, token = server.token): Promise<MessageDto[]> {
  const response = await server.app.api(`/api/threads/${threadId}/messages?limit=200`, { token });
  expect(response.status).toBe(200);
  return ((await response.json()) as { messages: MessageDto[] }).messages;
}

async function threadsOf(token = server.token): Promise<string[]> {
  const response = await server.app.api('/api/threads?limit=100', { token });
  return ((await response.json()) as { threads: { id: string }[] }).threads.map((thread) => thread.id);
}

const summaryCalls = () => server.stub.requests.filter((request) => request.kind === 'summary').length;

/** A chat of `turns` turns chained by previous_response_id, the first planting `planted`: its last response. */
async function chainedChat(client: OpenAI, planted: string, turns: number) {
  let previous: OpenAI.Responses.Response | null = null;
  let threadId = '';
  for (let index = 0; index < turns; index += 1) {
    const input = index === 0 ? `Remember ${planted}, please.` : `Turn ${index} of the chat, nothing special.`;
    const { data, response } = await client.responses
      .create({ model: MODEL, input, ...(previous ? { previous_response_id: previous.id } : {}) })
      .withResponse();
    previous = data;
    threadId = response.headers.get('x-chat-thread-id') ?? '';
  }
  return { last: previous as OpenAI.Responses.Response, threadId };
}

/** Calls the route as the SDK does and returns the refusal's status and OpenAI error body. */
async function refusalOf(run: () => Promise<unknown>): Promise<{ status: number; error: Record<string, unknown> }> {
  try {
    await run();
  } catch (error) {
    const failure = error as { status: number; error: Record<string, unknown> };
    return { status: failure.status, error: failure.error };
  }
  throw new Error('expected a refusal');
}

describe('POST /v1/responses/compact with the official SDK', () => {
  it(
    'folds the chat now and answers a compaction item that, sent back, stands for the summary (no fork)',
    { timeout: 120_000 },
    async () => {
      const client = openaiClient(server);
      const { last, threadId } = await chainedChat(client, 'CODE-41', 4);
      const foldsBefore = summaryCalls();
      const compacted = await client.responses.compact({ model: MODEL, previous_response_id: last.id });
      expect(compacted.object).toBe('response.compaction');
      expect(summaryCalls()).toBeGreaterThan(foldsBefore);
      const item = compacted.output.at(-1) as OpenAI.Responses.ResponseCompactionItem;
      expect(item.type).toBe('compaction');
      expect(item.id).toMatch(/^cmp_/);
      expect(item.encrypted_content).toEqual(expect.any(String));
      expect(compacted.output.filter((each) => each.type === 'compaction')).toHaveLength(1);
      expect(compacted.output.some((each) => (each as { role?: string }).role === 'user')).toBe(true);
      expect(compacted.usage.input_tokens).toBeGreaterThan(0);

      // The thread's summary now covers the first turns.
      const summary = (await (
        await server.app.api(`/api/threads/${threadId}/context`, { token: server.token })
      ).json()) as {
        summary: { revision: number } | null;
      };
      expect(summary.summary?.revision).toBeGreaterThanOrEqual(1);

      // Sent back, keyless, with a new question: the pack holds the summary, not the first message.
      const before = (await threadMessages(threadId)).length;
      const threads = await threadsOf();
      const input = [...compacted.output, { role: 'user' as const, content: 'Which code did I plant?' }];
      const { data: answer, response } = await client.responses
        .create({ model: MODEL, input: input as OpenAI.Responses.ResponseInput })
        .withResponse();
      expect(response.headers.get('x-chat-thread-id')).toBe(threadId);
      expect(answer.output_text).toContain('CODE-41');
      const pack = requestText(chatRequests(server).at(-1) as never);
      expect(pack).toContain('Intent: testing long chats');
      expect(pack).not.toContain('Remember CODE-41, please.');
      const after = await threadMessages(threadId);
      expect(after.length).toBe(before + 2);
      // "What the model saw" for that answer names the summary revision the item stood for, and shows its text.
      const reply = after.at(-1) as MessageDto;
      const saw = (await (
        await server.app.api(`/api/threads/${threadId}/messages/${reply.id}/context`, { token: server.token })
      ).json()) as { summary: { revision: number; text: string | null } | null };
      const revision = Number(item.encrypted_content.split('.')[2]);
      expect(revision).toBeGreaterThanOrEqual(1);
      expect(saw.summary?.revision).toBe(revision);
      expect(saw.summary?.text).toContain('CODE-41');
      expect(await threadsOf()).toEqual(threads);

      // The next request resends everything after the compaction item: it goes on in the same thread.
      const next = [
        ...input,
        { role: 'assistant' as const, content: answer.output_text },
        { role: 'user' as const, content: 'And one more turn.' },
      ];
      const { response: nextResponse } = await client.responses
        .create({ model: MODEL, input: next as OpenAI.Responses.ResponseInput })
        .withResponse();
      expect(nextResponse.headers.get('x-chat-thread-id')).toBe(threadId);
      const texts = (await threadMessages(threadId)).map((message) => message.content);
      expect(texts.filter((text) => text === 'Which code did I plant?')).toHaveLength(1);
      expect(texts.filter((text) => text === 'And one more turn.')).toHaveLength(1);
      expect(await threadsOf()).toEqual(threads);
    },
  );

  it(
    'compacts a stateless history (the input as sent) and echoes its user messages',
    { timeout: 120_000 },
    async () => {
      const client = openaiClient(server);
      const headers = { 'X-Thread-Id': `compact-stateless-${Date.now()}` };
      const history: OpenAI.Responses.ResponseInputItem[] = [];
      let threadId = '';
      for (const text of ['Plant CODE-52 here.', 'Second turn.', 'Third turn.']) {
        history.push({ role: 'user', content: text });
        const { data, response } = await client.responses
          .create({ model: MODEL, input: history, store: false }, { headers })
          .withResponse();
        history.push({ role: 'assistant', content: data.output_text });
        threadId = response.headers.get('x-chat-thread-id') ?? '';
      }
      const compacted = await client.responses.compact({ model: MODEL, input: history }, { headers });
      const users = compacted.output.filter((each) => each.type === 'message');
      expect(users.map((each) => (each as { content: { text: string }[] }).content[0]?.text)).toEqual([
        'Plant CODE-52 here.',
        'Second turn.',
        'Third turn.',
      ]);
      const { response } = await client.responses
        .create({
          model: MODEL,
          input: [...compacted.output, { role: 'user', content: 'Which code?' }] as OpenAI.Responses.ResponseInput,
        })
        .withResponse();
      expect(response.headers.get('x-chat-thread-id')).toBe(threadId);
    },
  );

  it(
    'two compactions at once fold the chat once: both name the same summary revision',
    { timeout: 120_000 },
    async () => {
      const client = openaiClient(server);
      const { last, threadId } = await chainedChat(client, 'CODE-55', 4);
      const [first, second] = await Promise.all([
        client.responses.compact({ model: MODEL, previous_response_id: last.id }),
        client.responses.compact({ model: MODEL, previous_response_id: last.id }),
      ]);
      const revisionOf = (compacted: OpenAI.Responses.CompactedResponse) =>
        Number((compacted.output.at(-1) as OpenAI.Responses.ResponseCompactionItem).encrypted_content.split('.')[2]);
      expect(revisionOf(first)).toBe(1);
      expect(revisionOf(second)).toBe(1);
      const context = (await (
        await server.app.api(`/api/threads/${threadId}/context`, { token: server.token })
      ).json()) as { summary: { revision: number; text: string } | null };
      expect(context.summary?.revision).toBe(1);
      expect(context.summary?.text.match(/CODE-55/g)).toHaveLength(1);
    },
  );

  it('refuses a tampered, a foreign and a deleted conversation’s compaction item with 400 param input', async () => {
    const client = openaiClient(server);
    const { last, threadId } = await chainedChat(client, 'CODE-63', 2);
    const compacted = await client.responses.compact({ model: MODEL, previous_response_id: last.id });
    const item = compacted.output.at(-1) as OpenAI.Responses.ResponseCompactionItem;
    const send = (content: string, sender: OpenAI = client) =>
      sender.responses.create({
        model: MODEL,
        input: [
          { type: 'compaction', encrypted_content: content },
          { role: 'user', content: 'go on' },
        ] as OpenAI.Responses.ResponseInput,
      });
    const tampered = item.encrypted_content.replace(/\.(\d+)\.(\d+)\./, (_all, revision: string, seq: string) => {
      return `.${revision}.${Number(seq) + 1}.`;
    });
    expect(tampered).not.toBe(item.encrypted_content);
    for (const content of [tampered, 'not-a-token']) {
      const refused = await refusalOf(() => send(content));
      expect(refused.status).toBe(400);
      expect(refused.error).toMatchObject({ type: 'invalid_request_error', param: 'input' });
    }
    // input_tokens reads a compaction item as the thread it stands for, and refuses a tampered one alike.
    const counted = await client.responses.inputTokens.count({
      model: MODEL,
      input: [
        { type: 'compaction', encrypted_content: item.encrypted_content },
        { role: 'user', content: 'go on' },
      ] as never,
    });
    expect(counted.input_tokens).toBeGreaterThan(0);
    const miscounted = await refusalOf(() =>
      client.responses.inputTokens.count({
        model: MODEL,
        input: [{ type: 'compaction', encrypted_content: tampered }] as never,
      }),
    );
    expect(miscounted.status).toBe(400);
    expect(miscounted.error).toMatchObject({ type: 'invalid_request_error', param: 'input' });
    const stranger = await server.guest();
    const foreign = await refusalOf(() =>
      send(item.encrypted_content, openaiClient(server, { apiKey: stranger.token })),
    );
    expect(foreign.status).toBe(400);
    expect(foreign.error).toMatchObject({ type: 'invalid_request_error', param: 'input' });
    expect(await threadMessages(threadId)).toHaveLength(4);

    const deleted = await server.app.api(`/api/threads/${threadId}`, { method: 'DELETE', token: server.token });
    expect(deleted.status).toBe(204);
    const gone = await refusalOf(() => send(item.encrypted_content));
    expect(gone.status).toBe(400);
    expect(gone.error).toMatchObject({ type: 'invalid_request_error', param: 'input' });
  });
});

describe('compaction_trigger (Codex CLI remote compaction)', () => {
  it(
    'is answered with exactly one compaction item and no model answer, streamed and not',
    { timeout: 120_000 },
    async () => {
      const client = openaiClient(server);
      const headers = { 'session-id': `codex-trigger-${Date.now()}`, 'x-codex-beta-features': 'remote_compaction_v2' };
      const history: OpenAI.Responses.ResponseInputItem[] = [
        { type: 'message', role: 'developer', content: [{ type: 'input_text', text: 'You are a coding agent.' }] },
      ];
      let threadId = '';
      for (const text of ['Plant CODE-88.', 'Second step.', 'Third step.']) {
        history.push({ type: 'message', role: 'user', content: [{ type: 'input_text', text }] });
        const { data, response } = await client.responses
          .create({ model: MODEL, input: history, store: false }, { headers })
          .withResponse();
        history.push({ type: 'message', role: 'assistant', content: data.output_text } as never);
        threadId = response.headers.get('x-chat-thread-id') ?? '';
      }
      const chatCalls = chatRequests(server).length;
      const messages = (await threadMessages(threadId)).length;
      const trigger = [...history, { type: 'compaction_trigger' }] as OpenAI.Responses.ResponseInput;
      const stream = await client.responses.create(
        { model: MODEL, input: trigger, store: false, stream: true },
        { headers },
      );
      const events: OpenAI.Responses.ResponseStreamEvent[] = [];
      for await (const event of stream) events.push(event);
      expect(events.map((event) => event.type)).toEqual([
        'response.created',
        'response.in_progress',
        'response.output_item.added',
        'response.output_item.done',
        'response.completed',
      ]);
      const completed = events.at(-1) as OpenAI.Responses.ResponseCompletedEvent;
      expect(completed.response.output).toHaveLength(1);
      expect(completed.response.output[0]?.type).toBe('compaction');
      const json = await client.responses.create({ model: MODEL, input: trigger, store: false }, { headers });
      expect(json.output.map((item) => item.type)).toEqual(['compaction']);
      expect(chatRequests(server).length).toBe(chatCalls);
      expect(await threadMessages(threadId)).toHaveLength(messages);

      // Codex then sends its history from the compaction item on: it goes on in the same thread.
      const item = completed.response.output[0] as OpenAI.Responses.ResponseCompactionItem;
      const { response } = await client.responses
        .create(
          {
            model: MODEL,
            input: [history[0], item, { role: 'user', content: 'Which code?' }] as OpenAI.Responses.ResponseInput,
            store: false,
          },
          { headers },
        )
        .withResponse();
      expect(response.headers.get('x-chat-thread-id')).toBe(threadId);
      expect(await threadMessages(threadId)).toHaveLength(messages + 2);
    },
  );

  it(
    "Codex's local compaction: the history rebuilt around its handoff summary goes on in the thread, not a fork from message 0",
    { timeout: 120_000 },
    async () => {
      const client = openaiClient(server);
      const headers = { 'session-id': `codex-local-${Date.now()}` };
      const developer: OpenAI.Responses.ResponseInputItem = {
        type: 'message',
        role: 'developer',
        content: [{ type: 'input_text', text: 'You are a coding agent.' }],
      };
      const environment: OpenAI.Responses.ResponseInputItem = {
        type: 'message',
        role: 'user',
        content: [{ type: 'input_text', text: '<environment_context>cwd=/work</environment_context>' }],
      };
      const user = (text: string): OpenAI.Responses.ResponseInputItem => ({
        type: 'message',
        role: 'user',
        content: [{ type: 'input_text', text }],
      });
      const assistant = (text: string) =>
        ({ type: 'message', role: 'assistant', content: [{ type: 'output_text', text }] }) as never;
      const history: OpenAI.Responses.ResponseInputItem[] = [developer, environment];
      let threadId = '';
      const send = async (input: OpenAI.Responses.ResponseInputItem[]) => {
        const { data, response } = await client.responses
          .create({ model: MODEL, input, store: false, stream: false }, { headers })
          .withResponse();
        return { text: data.output_text, threadId: response.headers.get('x-chat-thread-id') ?? '' };
      };
      for (const text of ['Plant CODE-77.', 'Next step.', 'Summarize the conversation for a handoff.']) {
        history.push(user(text));
        const answer = await send(history);
        history.push(assistant(answer.text));
        threadId = answer.threadId;
      }
      const summary = 'HANDOFF: we planted CODE-77 and chatted.';
      expect(history.at(-1)).toMatchObject({ content: [{ text: summary }] });
      const threads = await threadsOf();
      const before = (await threadMessages(threadId)).length;
      // Codex's rebuilt history: instructions, the environment, the user messages, the handoff summary, then the prompt.
      const rebuilt: OpenAI.Responses.ResponseInputItem[] = [
        developer,
        environment,
        user('Plant CODE-77.'),
        user('Next step.'),
        user(`${CODEX_SUMMARY_OPENING} You also have access to the state of the tools.\n${summary}`),
        user('Carry on with the work.'),
      ];
      const first = await send(rebuilt);
      expect(first.threadId).toBe(threadId);
      expect(first.text).toBe('stub reply to: Carry on with the work.');
      const second = await send([...rebuilt, assistant(first.text), user('And the next thing.')]);
      expect(second.threadId).toBe(threadId);
      const texts = (await threadMessages(threadId)).map((message) => message.content);
      expect(texts).toHaveLength(before + 4);
      expect(texts.filter((text) => text === 'Carry on with the work.')).toHaveLength(1);
      expect(await threadsOf()).toEqual(threads);

      // The prompt after the summary changed: an edit on a fork at that point (through the summary's answer), and the
      // next request goes on in that fork.
      const edited = await send([...rebuilt.slice(0, -1), user('Carry on differently.')]);
      expect(edited.threadId).not.toBe(threadId);
      const forked = (await threadMessages(edited.threadId)).map((message) => message.content);
      expect(forked).toEqual([...texts.slice(0, before), 'Carry on differently.', edited.text]);
      const after = await send([
        ...rebuilt.slice(0, -1),
        user('Carry on differently.'),
        assistant(edited.text),
        user('Then this.'),
      ]);
      expect(after.threadId).toBe(edited.threadId);
      expect(await threadMessages(threadId)).toHaveLength(before + 4);
    },
  );
});

describe('context_management compaction', () => {
  const long = (index: number) => `Turn ${index} CODE-9${index}: ${'lorem ipsum dolor sit amet '.repeat(60)}`;

  it(
    "sets the conversation's fold trigger: it folds earlier and the answer carries a compaction item",
    { timeout: 180_000 },
    async () => {
      const client = openaiClient(server);
      let previous: string | null = null;
      let threadId = '';
      let carried: OpenAI.Responses.ResponseOutputItem[] = [];
      let turns = 0;
      let added: string[] = [];
      for (; turns < 6 && carried.length === 0; turns += 1) {
        // Streamed: a compaction item comes as its own output item before response.completed.
        const { data: stream, response } = await client.responses
          .create({
            model: MODEL,
            input: long(turns),
            stream: true,
            context_management: [{ type: 'compaction', compact_threshold: 1500 }],
            ...(previous ? { previous_response_id: previous } : {}),
          })
          .withResponse();
        const events: OpenAI.Responses.ResponseStreamEvent[] = [];
        for await (const event of stream) events.push(event);
        const completed = events.at(-1) as OpenAI.Responses.ResponseCompletedEvent;
        expect(completed.type).toBe('response.completed');
        previous = completed.response.id;
        threadId = response.headers.get('x-chat-thread-id') ?? '';
        carried = completed.response.output.filter((item) => item.type === 'compaction');
        added = events.flatMap((event) => (event.type === 'response.output_item.added' ? [event.item.type] : []));
      }
      expect(added).toEqual(['message', 'compaction']);
      // messages=40 would not have folded after a few turns; the threshold did.
      expect(carried).toHaveLength(1);
      expect(turns).toBeLessThan(6);
      const settings = (await (
        await server.app.api(`/api/threads/${threadId}/settings`, { token: server.token })
      ).json()) as { trigger: string | null };
      expect(settings.trigger).toBe('tokens=1500');
      // The next answer carries none (no fold landed since).
      const next = await client.responses.create({
        model: MODEL,
        input: 'short one',
        context_management: [{ type: 'compaction', compact_threshold: 1500 }],
        previous_response_id: previous as string,
      });
      expect(next.output.filter((item) => item.type === 'compaction')).toHaveLength(0);
    },
  );

  it('refuses a threshold the keep policy cannot fold well below, naming context_management', async () => {
    const client = openaiClient(server);
    const refused = await refusalOf(() =>
      client.responses.create({
        model: MODEL,
        input: 'hello',
        context_management: [{ type: 'compaction', compact_threshold: 100 }],
      }),
    );
    expect(refused.status).toBe(400);
    expect(refused.error).toMatchObject({ type: 'invalid_request_error', param: 'context_management' });
  });
});
