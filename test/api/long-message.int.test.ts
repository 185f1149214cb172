import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChatModelPort } from '../../src/core/ports';
import { createChatPort } from '../../src/llm/model-ports';
import { OfflineChatModel } from '../../src/llm/offline-chat-model';
import type { MessageDto, SendMessageResponseDto, ThreadDto } from '../../src/shared/api';
import { openTab } from '../support/socket-client';
import { startTestApp, type TestApp } from '../support/test-app';
import { waitFor } from '../support/wait-for';

/** A message of `length` characters with a recognisable opening and ending: prose, as a pasted document would be. */
function longMessage(length: number): string {
  const head = 'OPENING-LINE: please review the notes below. ';
  const tail = ' CLOSING-LINE: what do you think?';
  const filler = 'The venue on the river has a terrace for forty people and a quiet room for workshops. ';
  return head + filler.repeat(Math.ceil(length / filler.length)).slice(0, length - head.length - tail.length) + tail;
}

const WINDOWS: { name: string; env: Record<string, string> }[] = [
  { name: 'the 2,048-token demo window', env: {} },
  { name: 'a 4,096-token window', env: { CONTEXT_MAX_INPUT_TOKENS: '4096' } },
];

describe.each(WINDOWS)('a long message under $name', ({ env }) => {
  let app: TestApp;
  let token: string;

  beforeAll(async () => {
    app = await startTestApp({ env });
    ({ token } = await app.guest());
  });
  afterAll(async () => {
    await app?.stop();
  });

  const newThread = async () =>
    (await (await app.api('/api/threads', { method: 'POST', token, json: {} })).json()) as ThreadDto;
  const transcript = async (threadId: string) =>
    ((await (await app.api(`/api/threads/${threadId}/messages`, { token })).json()) as { messages: MessageDto[] })
      .messages;

  for (const length of [5_000, 32_000]) {
    it(`answers ${length} characters over REST, the transcript keeping the message whole`, async () => {
      const thread = await newThread();
      const content = longMessage(length);
      const response = await app.api(`/api/threads/${thread.id}/messages`, {
        method: 'POST',
        token,
        json: { content },
      });
      expect(response.status).toBe(201);
      const body = (await response.json()) as SendMessageResponseDto;
      expect(body.turn.status, JSON.stringify(body.turn.error)).toBe('complete');
      expect(body.messages.at(-1)).toMatchObject({ role: 'assistant', status: 'complete' });
      expect(body.messages.at(-1)?.content).toContain('[offline model] You said: "OPENING-LINE');
      const stored = await transcript(thread.id);
      expect(stored[0]).toMatchObject({ role: 'user', content });
      // A second, short message is answered too: the long one no longer blocks the thread.
      const next = await app.api(`/api/threads/${thread.id}/messages`, {
        method: 'POST',
        token,
        json: { content: 'Thanks, and the budget is 18,000 EUR.' },
      });
      expect(((await next.json()) as SendMessageResponseDto).turn.status).toBe('complete');
    });

    it(`answers ${length} characters over a socket`, async () => {
      const thread = await newThread();
      const tab = await openTab(app, token);
      try {
        const { response } = await tab.request('message-send', {
          threadId: thread.id,
          content: longMessage(length),
          clientMessageId: `long-${length}`,
        });
        expect(response).toMatchObject({ ok: true });
        let answer: MessageDto | undefined;
        await waitFor(
          async () => {
            answer = (await transcript(thread.id)).find(
              (message) => message.role === 'assistant' && message.status !== 'streaming',
            );
            return answer !== undefined;
          },
          { timeoutMs: 30_000, what: 'the answer' },
        );
        expect(answer).toMatchObject({ status: 'complete' });
        expect(answer?.content).toContain('[offline model]');
      } finally {
        tab.close();
      }
    });

    it(`answers ${length} characters on /v1/chat/completions`, async () => {
      const models = (await (await app.api('/v1/models', { token })).json()) as { data: { id: string }[] };
      const response = await app.api('/v1/chat/completions', {
        method: 'POST',
        token,
        json: { model: models.data[0]?.id, messages: [{ role: 'user', content: longMessage(length) }] },
      });
      const body = (await response.json()) as { choices?: { message: { content: string } }[] };
      expect(response.status, JSON.stringify(body)).toBe(200);
      expect(body.choices?.[0]?.message.content).toContain('[offline model] You said: "OPENING-LINE');
    });
  }
});

describe('Retry of a long message whose answer failed', () => {
  let app: TestApp;
  let token: string;
  const seen: string[][] = [];
  let failNext = false;

  beforeAll(async () => {
    const offline = createChatPort(new OfflineChatModel(), 'offline');
    // The offline model, failing once on request (as every long message did before it was condensed).
    const chat: ChatModelPort = {
      model: offline.model,
      stream: async (input) => {
        seen.push(input.messages.map((message) => message.content));
        if (failNext) {
          failNext = false;
          throw new Error('the answer failed');
        }
        return offline.stream(input);
      },
    };
    app = await startTestApp({ tuning: { chat } });
    ({ token } = await app.guest());
  });
  afterAll(async () => {
    await app?.stop();
  });

  it('answers on Retry, the model reading the message condensed within the budget', async () => {
    const thread = (await (await app.api('/api/threads', { method: 'POST', token, json: {} })).json()) as ThreadDto;
    // Past the room the demo window leaves a message (with the short tool schemas a 5,000-character one now fits).
    const content = longMessage(7_000);
    failNext = true;
    const failed = (await (
      await app.api(`/api/threads/${thread.id}/messages`, { method: 'POST', token, json: { content } })
    ).json()) as SendMessageResponseDto;
    expect(failed.turn.status).toBe('error');
    const retried = await app.api(`/api/threads/${thread.id}/messages/${failed.userMessage.id}/retry`, {
      method: 'POST',
      token,
    });
    expect(retried.status).toBe(201);
    const body = (await retried.json()) as SendMessageResponseDto;
    expect(body.turn.status, JSON.stringify(body.turn.error)).toBe('complete');
    expect(body.messages.at(-1)?.content).toContain('[offline model] You said: "OPENING-LINE');
    // The model got the message's head and tail around the marker, not the whole text.
    const shown = seen.at(-1)?.find((text) => text.startsWith('OPENING-LINE'));
    expect(shown).toContain('CLOSING-LINE');
    expect(shown).toMatch(/characters are left out here: it is too long for the model's context/);
    expect(shown!.length).toBeLessThan(content.length);
  });
});
