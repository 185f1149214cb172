import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool } from '../../src/core/tools';
import {
  lastUserText,
  replyWithText,
  replyWithToolCalls,
  startOpenAIStub,
  type OpenAIStub,
  type StubRequest,
} from '../support/openai-stub';
import { startTestApp, type TestApp } from '../support/test-app';
import { classifyRequest, lastMessage, responder, threadHelpers, type ThreadHelpers } from './tool-test-kit';

const THREADS = 4;

/** A background tool that runs until it is stopped. */
const holdAsync = defineTool({
  name: 'hold_async',
  description: 'Holds a background slot.',
  mode: 'async',
  timeoutMs: 120_000,
  schema: z.object({}),
  run: (_args, { signal }) =>
    new Promise<string>((_, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true })),
});

describe('MAX_ASYNC_RUNS_PER_USER across threads', () => {
  let stub: OpenAIStub;
  let app: TestApp;
  let helpers: ThreadHelpers;
  // The first chat call of every thread is held until all have arrived: their tool calls then land together.
  let waiting: (() => void)[] = [];

  function chat(request: StubRequest) {
    if (lastMessage(request)?.role === 'tool') return replyWithText('Started, or told no.');
    if (lastUserText(request.body) !== 'hold a slot') return replyWithText('plain');
    return new Promise<ReturnType<typeof replyWithToolCalls>>((resolve) => {
      waiting.push(() => resolve(replyWithToolCalls([{ name: 'hold_async', arguments: {} }])));
      if (waiting.length === THREADS) for (const release of waiting.splice(0)) release();
    });
  }

  beforeAll(async () => {
    stub = await startOpenAIStub({ classifyRequest, responder: responder(chat) });
    app = await startTestApp({
      env: { OPENAI_BASE_URL: stub.url, MAX_ASYNC_RUNS_PER_USER: '1' },
      tuning: { extraTools: [holdAsync], toolCancelPollMs: 100 },
    });
    helpers = await threadHelpers(app);
  });
  afterAll(async () => {
    waiting = [];
    await app?.stop();
    await stub?.close();
  });

  it('lets one user start no more background runs than the cap when turns in several threads call tools at once', async () => {
    const threads = await Promise.all(Array.from({ length: THREADS }, () => helpers.newThread()));
    const results = await Promise.all(threads.map((thread) => helpers.send(thread.id, 'hold a slot')));
    const answers = results.map((result) => result.messages.find((message) => message.role === 'tool')?.content ?? '');
    const active = await app.application.db.toolRun.count({
      where: { threadId: { in: threads.map((thread) => thread.id) }, status: { in: ['queued', 'running'] } },
    });
    expect(active).toBe(1);
    expect(answers.filter((answer) => answer.startsWith('Started hold_async'))).toHaveLength(1);
    expect(
      answers.filter((answer) => /^Not run: this user already has 1 background tool runs going/.test(answer)),
    ).toHaveLength(THREADS - 1);
  });
});
