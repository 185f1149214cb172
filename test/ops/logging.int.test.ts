import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger, secretsOfEnv } from '../../src/app/logger';
import type { ThreadDto } from '../../src/shared/api';
import { lastUserText, replyWithError, replyWithText, startOpenAIStub, type OpenAIStub } from '../support/openai-stub';
import { classifyRequest } from '../support/summary-stub';
import { startTestApp, type TestApp } from '../support/test-app';
import { waitFor } from '../support/wait-for';

const API_KEY = 'sk-test-9f8e7d6c5b4a39281706f5e4d3c2b1a0';
const SECRET_WORDS = 'PERIWINKLE-AARDVARK-5512';

interface LogLine {
  level: number;
  msg: string;
  [key: string]: unknown;
}

describe('logs', () => {
  let stub: OpenAIStub;
  let app: TestApp;
  const raw: string[] = [];
  const lines = () =>
    raw
      .join('')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as LogLine);

  beforeAll(async () => {
    stub = await startOpenAIStub({
      apiKey: API_KEY,
      classifyRequest,
      responder: (request) => {
        if (request.kind === 'summary') return replyWithText(`Summary of the talk: ${SECRET_WORDS} was mentioned.`);
        const said = lastUserText(request.body);
        // A provider error that echoes the user's words and the key, as some providers do.
        if (said.includes('fail')) return replyWithError(400, { message: `Bad request for key ${API_KEY}: "${said}"` });
        return replyWithText(`You said ${said}`);
      },
    });
    const destination = new Writable({
      write(chunk: Buffer, _encoding, done) {
        raw.push(chunk.toString());
        done();
      },
    });
    const env = {
      OPENAI_BASE_URL: stub.url,
      OPENAI_API_KEY: API_KEY,
      SUMMARY_TRIGGER: 'messages=4',
      SUMMARY_KEEP: 'messages=2',
      MODEL_MAX_RETRIES: '0',
    };
    // Debug level: even the most talkative level must not carry secrets.
    const log = createLogger({ level: 'debug', destination, secrets: secretsOfEnv(env) });
    app = await startTestApp({ env, log });
  });
  afterAll(async () => {
    await app?.stop();
    await stub?.close();
  });

  it('carry the ids of the turn, the job and the model call, and never the key or the message content', async () => {
    const { token } = await app.guest();
    const thread = (await (await app.api('/api/threads', { method: 'POST', token, json: {} })).json()) as ThreadDto;
    const ok = await app.api(`/api/threads/${thread.id}/messages`, {
      method: 'POST',
      token,
      json: { content: `remember ${SECRET_WORDS} please` },
    });
    expect(ok.status).toBe(201);
    const failed = await app.api(`/api/threads/${thread.id}/messages`, {
      method: 'POST',
      token,
      json: { content: `now fail with ${SECRET_WORDS}` },
    });
    expect(((await failed.json()) as { turn: { status: string } }).turn.status).toBe('error');
    await app.api(`/api/threads/${thread.id}/messages`, {
      method: 'POST',
      token,
      json: { content: `and once more ${SECRET_WORDS}` },
    });
    await waitFor(() => lines().some((line) => line.msg === 'fold committed'), { timeoutMs: 30_000, what: 'the fold' });

    const all = lines();
    // The key was really used and really echoed by the provider: it never reaches a line.
    expect(stub.requests.every((request) => request.apiKey === API_KEY)).toBe(true);
    expect(raw.join('')).not.toContain(API_KEY);
    // No message content at info level and above (the provider error echoed it too).
    const loud = all.filter((line) => line.level >= 30);
    expect(loud.length).toBeGreaterThan(0);
    expect(loud.filter((line) => JSON.stringify(line).includes(SECRET_WORDS))).toEqual([]);

    // Lines written inside a turn's model call carry the thread, turn, purpose and model without being passed them.
    const chatCalls = all.filter((line) => line.msg === 'model call finished' && line.purpose === 'chat');
    expect(chatCalls.length).toBeGreaterThanOrEqual(2);
    for (const line of chatCalls)
      expect(line).toMatchObject({ threadId: thread.id, turnId: expect.any(String), model: 'gpt-4o-mini' });
    expect(new Set(chatCalls.map((line) => line.turnId)).size).toBe(chatCalls.length);
    // The failed turn's warning and the fold's lines: the job's id and queue come from the context.
    expect(all.find((line) => line.msg === 'turn failed')).toMatchObject({
      threadId: thread.id,
      turnId: expect.any(String),
      code: expect.any(String),
    });
    expect(all.find((line) => line.msg === 'fold committed')).toMatchObject({
      threadId: thread.id,
      jobId: expect.any(String),
      queue: 'summary',
    });
    expect(all.find((line) => line.msg === 'model call finished' && line.purpose === 'summary')).toMatchObject({
      threadId: thread.id,
      jobId: expect.any(String),
    });
  });
});
