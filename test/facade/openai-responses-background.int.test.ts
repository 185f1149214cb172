import type OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import type { MessageDto } from '../../src/shared/api';
import { useChatServer } from '../support/chat-server';
import { lastUserText, replyWithText, type StubResponder } from '../support/openai-stub';
import { waitFor } from '../support/wait-for';
import { openaiClient } from './facade-kit';

/** The stub's answer to `text`: long enough for several deltas of a background stream. */
const answerTo = (text: string) =>
  `The answer to "${text}" is long enough to need several deltas: ${'lorem ipsum dolor '.repeat(8)}end.`;

/** Asked to be slow, the answer streams one word every 150 ms. */
const chat: StubResponder = (request) => {
  const text = lastUserText(request.body);
  return replyWithText(answerTo(text), /slow/.test(text) ? { chunkDelayMs: 150 } : {});
};

const server = useChatServer({ stub: { responder: chat }, env: { BACKGROUND_RESPONSES_PER_USER: '2' } });

type StreamEvent = OpenAI.Responses.ResponseStreamEvent;

async function collect(stream: AsyncIterable<StreamEvent>): Promise<StreamEvent[]> {
  const events: StreamEvent[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

async function threadMessages(threadId: string): Promise<MessageDto[]> {
  const response = await server.app.api(`/api/threads/${threadId}/messages`, { token: server.token });
  return ((await response.json()) as { messages: MessageDto[] }).messages;
}

describe('background responses', () => {
  it('answers at once as queued; the answer is then retrieved completed', async () => {
    const client = openaiClient(server);
    const created = await client.responses.create({
      model: 'gpt-4o-mini',
      input: 'a slow background one',
      background: true,
    });
    expect(created).toMatchObject({ status: 'queued', background: true, output: [] });
    let retrieved = await client.responses.retrieve(created.id);
    expect(['queued', 'in_progress']).toContain(retrieved.status);
    await waitFor(async () => (retrieved = await client.responses.retrieve(created.id)).status === 'completed', {
      timeoutMs: 30_000,
      what: 'the background answer',
    });
    expect(retrieved.output_text).toMatch(/^The answer to "a slow background one"/);
    // A stored response alone: store: false is refused with background.
    await expect(
      client.responses.create({ model: 'gpt-4o-mini', input: 'x', background: true, store: false }),
    ).rejects.toMatchObject({ status: 400, param: 'background' });
  });

  it('a stream resumed with starting_after goes on with the events the first stream numbered so', async () => {
    const client = openaiClient(server);
    const live = await collect(
      await client.responses.create({ model: 'gpt-4o-mini', input: 'stream it slow', background: true, stream: true }),
    );
    const id = (live[0] as OpenAI.Responses.ResponseCreatedEvent).response.id;
    expect(live.map((event) => event.sequence_number)).toEqual(live.map((_event, index) => index));
    expect(live.filter((event) => event.type === 'response.output_text.delta').length).toBeGreaterThan(2);
    expect(live.at(-1)?.type).toBe('response.completed');
    // From any process, after any event: the same events from there on, the same text.
    const whole = await collect(await client.responses.retrieve(id, { stream: true }));
    expect(whole).toEqual(live);
    const resumed = await collect(await client.responses.retrieve(id, { stream: true, starting_after: 5 }));
    expect(resumed).toEqual(live.slice(6));
    const text = (events: StreamEvent[]) =>
      events
        .filter(
          (event): event is OpenAI.Responses.ResponseTextDeltaEvent => event.type === 'response.output_text.delta',
        )
        .map((event) => event.delta)
        .join('');
    expect(text(live)).toMatch(/^The answer to "stream it slow".*end\.$/);
    // Resumed before the answer ended: its events come, numbered alike.
    const next = await client.responses.create({ model: 'gpt-4o-mini', input: 'slow again', background: true });
    const early = await collect(await client.responses.retrieve(next.id, { stream: true, starting_after: 1 }));
    expect(early[0]?.sequence_number).toBe(2);
    expect(early.at(-1)?.type).toBe('response.completed');
    expect(text(early)).toMatch(/^The answer to "slow again"/);
  });

  it('cancel stops the answer as the web app stop does; a stranger can neither cancel nor stream it', async () => {
    const client = openaiClient(server);
    const { data: created, response } = await client.responses
      .create({ model: 'gpt-4o-mini', input: 'slow, to be cancelled', background: true })
      .withResponse();
    const threadId = response.headers.get('x-chat-thread-id')!;
    await waitFor(async () => (await client.responses.retrieve(created.id)).status === 'in_progress', {
      timeoutMs: 10_000,
      what: 'the answer to start',
    });
    await new Promise((resolve) => setTimeout(resolve, 400));
    const stranger = openaiClient(server, { apiKey: (await server.guest()).token });
    await expect(stranger.responses.cancel(created.id)).rejects.toMatchObject({ status: 404 });
    await expect(stranger.responses.retrieve(created.id, { stream: true })).rejects.toMatchObject({ status: 404 });
    const cancelled = await client.responses.cancel(created.id);
    expect(cancelled.status).toBe('cancelled');
    const messages = await threadMessages(threadId);
    expect(messages.map((message) => [message.role, message.status])).toEqual([
      ['user', 'complete'],
      ['assistant', 'cancelled'],
    ]);
    // What had streamed when it stopped (how far it got depends on the machine's pace), never the whole answer.
    const whole = answerTo('slow, to be cancelled');
    expect(messages[1]?.content.length).toBeGreaterThan(0);
    expect(whole.startsWith(messages[1]!.content)).toBe(true);
    expect(messages[1]?.content.length).toBeLessThan(whole.length);
    // Its stream ends as cancelled, with the text it kept.
    const events = await collect(await client.responses.retrieve(created.id, { stream: true }));
    expect(events.at(-1)).toMatchObject({ type: 'response.incomplete', response: { status: 'cancelled' } });
    // Cancelling again changes nothing.
    expect((await client.responses.cancel(created.id)).status).toBe('cancelled');
  });

  it('refuses a background response while the user has BACKGROUND_RESPONSES_PER_USER answers in flight', async () => {
    const user = await server.guest();
    const client = openaiClient(server, { apiKey: user.token });
    const running = [];
    for (const input of ['slow one', 'slow two'])
      running.push(await client.responses.create({ model: 'gpt-4o-mini', input, background: true }));
    await expect(
      client.responses.create({ model: 'gpt-4o-mini', input: 'slow three', background: true }),
    ).rejects.toMatchObject({ status: 429, code: 'busy' });
    // Another user is not held by them; once one ends, there is room again.
    const other = openaiClient(server);
    await other.responses.cancel(
      (await other.responses.create({ model: 'gpt-4o-mini', input: 'slow other', background: true })).id,
    );
    await client.responses.cancel(running[0]!.id);
    const third = await client.responses.create({ model: 'gpt-4o-mini', input: 'slow three', background: true });
    expect(third.status).toBe('queued');
    for (const each of [running[1]!, third]) await client.responses.cancel(each.id);
  });
});
