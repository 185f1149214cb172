import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type {
  ContextPackDto,
  MessageContextDto,
  SendMessageResponseDto,
  ServerInfoDto,
  ThreadDetailDto,
  ThreadDto,
} from '../../src/shared/api';
import { startTestApp, type TestApp } from '../support/test-app';
import { waitFor } from '../support/wait-for';

describe('the offline model answers from recall', () => {
  let app: TestApp;
  let token: string;

  beforeAll(async () => {
    // No endpoint: the built-in offline model. Folds early, so the first message leaves the window.
    app = await startTestApp({ env: { SUMMARY_TRIGGER: 'messages=6', SUMMARY_KEEP: 'messages=2' } });
    ({ token } = await app.guest());
  });
  afterAll(async () => {
    await app?.stop();
  });

  const get = async <T>(path: string) => (await (await app.api(path, { token })).json()) as T;
  async function send(threadId: string, content: string): Promise<SendMessageResponseDto> {
    const response = await app.api(`/api/threads/${threadId}/messages`, { method: 'POST', token, json: { content } });
    expect(response.status).toBe(201);
    return (await response.json()) as SendMessageResponseDto;
  }

  it('asked "what was my budget?" after the budget left the window, it quotes the recalled message with its seq', async () => {
    expect((await get<ServerInfoDto>('/api/info')).offline).toBe(true);
    const thread = (await (await app.api('/api/threads', { method: 'POST', token, json: {} })).json()) as ThreadDto;
    await send(thread.id, 'Our budget for the Lisbon week is 2400 EUR, flights included.');
    for (const content of [
      'I like walking tours.',
      'The hotel should be near Alfama.',
      'We land at 10:40 on Saturday.',
      'Sintra is a maybe.',
    ]) {
      await send(thread.id, content);
      await waitFor(async () => !(await get<ThreadDetailDto>(`/api/threads/${thread.id}`)).context.foldPending, {
        timeoutMs: 30_000,
        what: 'the fold',
      });
    }
    const before = await get<ContextPackDto>(`/api/threads/${thread.id}/context`);
    expect(before.window.fromSeq).toBeGreaterThan(2);

    const asked = await send(thread.id, 'What was my budget?');
    const answer = asked.messages.at(-1)!;
    expect(answer.content).toMatch(
      /^\[offline model\] \[#1\] \(you, recalled from earlier\) says: "Our budget for the Lisbon week is 2400 EUR, flights included\."/,
    );
    // It came through auto-recall: the answer's manifest lists #1 as recalled, not in its window.
    const seen = await get<MessageContextDto>(`/api/threads/${thread.id}/messages/${answer.id}/context`);
    expect(seen.recalledSeqs).toContain(1);
    expect(seen.windowSeqs).not.toContain(1);

    // A plain statement is restated as before.
    const plain = await send(thread.id, 'Great, thanks.');
    expect(plain.messages.at(-1)?.content).toContain('You said: "Great, thanks."');
  }, 120_000);

  it('quotes what the window holds with its seq, and restates questions nothing in the context answers', async () => {
    const thread = (await (await app.api('/api/threads', { method: 'POST', token, json: {} })).json()) as ThreadDto;
    await send(thread.id, 'The hotel should be near Alfama.');
    await send(thread.id, 'I like walking tours.');
    const hotel = (await send(thread.id, 'Remind me where the hotel should be?')).messages.at(-1)?.content;
    expect(hotel).toMatch(/^\[offline model\] \[#1\] \(you, in my window\) says: "The hotel should be near Alfama\."/);
    const unknown = (await send(thread.id, 'What is the weather in Porto?')).messages.at(-1)?.content;
    expect(unknown).toContain('You said: "What is the weather in Porto?"');
  }, 120_000);
});
