import { describe, expect, it } from 'vitest';
import type { MessageDto, SendMessageResponseDto } from '../../src/shared/api';
import { wireContentText } from '../../src/llm/count-chat-tokens';
import { replyWithText } from '../support/openai-stub';
import { classifyRequest, summaryResponder } from '../support/summary-stub';
import { useChatServer } from '../support/chat-server';
import { memoryKit, recordEvents } from './memory-test-kit';

describe('regenerating the last answer through REST', () => {
  let answers = 0;

  const server = useChatServer({
    stub: { classifyRequest, responder: summaryResponder({ chat: () => replyWithText(`answer number ${++answers}`) }) },
  });
  const kit = memoryKit(server);

  const chatTexts = (from: number) =>
    server.stub.requests
      .slice(from)
      .filter((request) => request.kind === 'chat')
      .map((request) => request.body.messages.map((message) => wireContentText(message.content)));

  it('appends a new answer, keeps the replaced one marked superseded, and the model never sees both', async () => {
    const thread = await kit.createThread();
    await kit.send(thread.id, 'First question?');
    const second = await kit.send(thread.id, 'Second question?');
    const replaced = second.messages[0] as MessageDto;
    expect(replaced.content).toBe('answer number 2');

    const recorder = recordEvents(server.app, thread.id);
    const mark = server.stub.requests.length;
    const response = await server.app.api(`/api/threads/${thread.id}/regenerate`, {
      method: 'POST',
      token: server.token,
    });
    expect(response.status).toBe(201);
    const body = (await response.json()) as SendMessageResponseDto & { superseded: MessageDto[] };
    expect(body.turn.status).toBe('complete');
    expect(body.userMessage.id).toBe(second.userMessage.id);
    expect(body.messages.map((message) => [message.seq, message.content])).toEqual([[5, 'answer number 3']]);
    expect(body.superseded.map((message) => [message.id, message.superseded])).toEqual([[replaced.id, true]]);
    expect(recorder.events).toContainEqual(
      expect.objectContaining({
        type: 'message-updated',
        message: expect.objectContaining({ id: replaced.id, superseded: true }),
      }),
    );

    // The regenerate call saw the question without the old answer.
    const regenerated = chatTexts(mark);
    expect(regenerated).toHaveLength(1);
    expect(regenerated[0]?.slice(1)).toEqual(['First question?', 'answer number 1', 'Second question?']);

    // The next turn sees the new answer only; the transcript keeps both.
    await kit.send(thread.id, 'Third question?');
    const next = chatTexts(mark).at(-1) ?? [];
    expect(next.slice(1)).toEqual([
      'First question?',
      'answer number 1',
      'Second question?',
      'answer number 3',
      'Third question?',
    ]);
    const transcript = await kit.transcript(thread.id);
    expect(transcript.map((message) => [message.seq, message.content, message.superseded])).toEqual([
      [1, 'First question?', false],
      [2, 'answer number 1', false],
      [3, 'Second question?', false],
      [4, 'answer number 2', true],
      [5, 'answer number 3', false],
      [6, 'Third question?', false],
      [7, 'answer number 4', false],
    ]);
    recorder.stop();
  });

  it('refuses when there is nothing to answer again', async () => {
    const thread = await kit.createThread();
    const response = await server.app.api(`/api/threads/${thread.id}/regenerate`, {
      method: 'POST',
      token: server.token,
    });
    expect(response.status).toBe(409);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe('CONFLICT');
  });
});
