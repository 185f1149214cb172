import { z } from 'zod';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { defineTool, ToolError } from '../../src/core/tools';
import type { ContextPackDto, ToolRunDto } from '../../src/shared/api';
import { RUN_DISCARDED_BY_FORGET } from '../../src/db/memory-controls-repository';
import { useChatServer } from '../support/chat-server';
import {
  lastUserText,
  replyWithText,
  replyWithToolCalls,
  type StubReply,
  type StubRequest,
} from '../support/openai-stub';
import { waitFor } from '../support/wait-for';
import {
  classifyRequest,
  condenseReply,
  lastMessage,
  threadHelpers,
  isServerNote,
  type ThreadHelpers,
} from '../tools/tool-test-kit';

const SECRET = 'CODE-4242';

/** A background lookup that fails quoting what it was asked: its error holds the user's words. */
const lookupTool = defineTool({
  name: 'lookup_record',
  description: 'Looks a record up in the background.',
  mode: 'async',
  schema: z.object({ query: z.string() }),
  run: async ({ query }) => {
    throw new ToolError(`no record matches "${query}"`);
  },
});
const runIdOf = (content: string | undefined) => /as run ([0-9a-f-]{36})/.exec(content ?? '')?.[1] ?? '';

describe('a forget vs the async tool runs that read the transcript before it', () => {
  let helpers: ThreadHelpers;
  /** While set, condense calls wait for it: a run that finished is held between its result and its report. */
  let condenseGate: Promise<void> | null = null;

  function chat(request: StubRequest): StubReply {
    const last = lastMessage(request);
    if (isServerNote(last)) return replyWithText('The background work ended.');
    if (last?.role === 'tool') return replyWithText('It is running.');
    const user = lastUserText(request.body);
    if (user === 'analyze slowly')
      return replyWithToolCalls([{ name: 'analyze_thread', arguments: { pace_ms: 1500 } }]);
    if (user === 'analyze quickly') return replyWithToolCalls([{ name: 'analyze_thread', arguments: { pace_ms: 0 } }]);
    if (user.startsWith('look up '))
      return replyWithToolCalls([{ name: 'lookup_record', arguments: { query: user.slice('look up '.length) } }]);
    return replyWithText('noted');
  }

  const server = useChatServer({
    stub: {
      classifyRequest,
      responder: async (request) => {
        if (request.kind !== 'condense') return chat(request);
        await condenseGate;
        return condenseReply(request);
      },
    },
    // A small inline size: the analysis report is condensed by the summary model before it is stored.
    env: { TOOL_RESULT_INLINE_TOKENS: '60' },
    app: { tuning: { toolCancelPollMs: 100, extraTools: [lookupTool] } },
  });
  beforeAll(async () => {
    helpers = await threadHelpers(server.app);
  });
  beforeEach(() => {
    server.stub.reset();
    condenseGate = null;
  });

  const getRun = async (runId: string) =>
    (await (await server.app.api(`/api/tool-runs/${runId}`, { token: helpers.token })).json()) as ToolRunDto;

  async function expectNothingRemembers(threadId: string, runId: string, forgetMark: number): Promise<void> {
    // The run's report lands (as a cancelled run) and its follow-up turn ends.
    await waitFor(
      async () =>
        (await helpers.messages(threadId)).some(
          (message) => message.toolRunId === runId && message.status === 'complete',
        ),
      { timeoutMs: 30_000, what: 'the run report' },
    );
    await waitFor(
      async () =>
        (await server.app.application.db.turn.count({ where: { threadId, status: { in: ['queued', 'running'] } } })) ===
        0,
      { timeoutMs: 30_000, what: 'the follow-up turn' },
    );
    const run = await getRun(runId);
    expect(run).toMatchObject({ status: 'cancelled', resultPreview: null, error: RUN_DISCARDED_BY_FORGET });
    const transcript = await helpers.messages(threadId);
    const note = transcript.find((message) => message.toolRunId === runId);
    expect(note?.content).toContain(`analyze_thread (run ${runId}`);
    expect(note?.content).toContain(RUN_DISCARDED_BY_FORGET);
    expect(JSON.stringify(transcript)).not.toContain(SECRET);
    const context = (await (
      await server.app.api(`/api/threads/${threadId}/context`, { token: helpers.token })
    ).json()) as ContextPackDto;
    expect(JSON.stringify(context)).not.toContain(SECRET);
    const stored = await server.app.application.db.toolRun.findUniqueOrThrow({ where: { id: runId } });
    expect(JSON.stringify(stored)).not.toContain(SECRET);
    // No model request after the forget carried it (the follow-up, a condense of the stale result).
    expect(
      server.stub.requests.slice(forgetMark).filter((request) => JSON.stringify(request.body).includes(SECRET)),
    ).toEqual([]);
  }

  it('cancels a run that is still working: it reports that it was discarded, never what it read', async () => {
    const thread = await helpers.newThread();
    const secret = await helpers.send(thread.id, `My locker code is ${SECRET}.`);
    const started = await helpers.send(thread.id, 'analyze slowly');
    const runId = runIdOf(started.messages[1]?.content);
    // The run has read the transcript (the secret included) and is pausing before its next step.
    await waitFor(async () => (await getRun(runId)).progress >= 0.25, {
      timeoutMs: 15_000,
      what: 'the run to read the transcript',
    });
    const mark = server.stub.requests.length;
    const forget = await server.app.api(`/api/threads/${thread.id}/messages/${secret.userMessage.id}`, {
      method: 'DELETE',
      token: helpers.token,
    });
    expect(forget.status).toBe(200);
    await expectNothingRemembers(thread.id, runId, mark);
  });

  it('discards the result of a run that finished before the forget but had not reported yet', async () => {
    const thread = await helpers.newThread();
    const secret = await helpers.send(thread.id, `Remember ${SECRET}, please.`);
    let release = () => undefined as void;
    condenseGate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const started = await helpers.send(thread.id, 'analyze quickly');
    const runId = runIdOf(started.messages[1]?.content);
    // The tool has returned its report (which quotes the secret) and the worker is condensing it.
    await waitFor(() => server.stub.requests.some((request) => request.kind === 'condense'), {
      timeoutMs: 15_000,
      what: 'the condense call',
    });
    expect(JSON.stringify(server.stub.requests.find((request) => request.kind === 'condense')?.body)).toContain(SECRET);
    const mark = server.stub.requests.length;
    const forget = await server.app.api(`/api/threads/${thread.id}/messages/${secret.userMessage.id}`, {
      method: 'DELETE',
      token: helpers.token,
    });
    expect(forget.status).toBe(200);
    release();
    await expectNothingRemembers(thread.id, runId, mark);
  });

  it("clears a reported run's error text when the message that asked for it is forgotten", async () => {
    const thread = await helpers.newThread();
    const asked = await helpers.send(thread.id, `look up ${SECRET}`);
    const runId = runIdOf(asked.messages[1]?.content);
    await waitFor(
      async () =>
        (await getRun(runId)).status === 'failed' &&
        (await server.app.application.db.turn.count({
          where: { threadId: thread.id, status: { in: ['queued', 'running'] } },
        })) === 0,
      { timeoutMs: 30_000, what: 'the failed run and its report' },
    );
    expect((await getRun(runId)).error).toContain(SECRET);
    const forget = await server.app.api(`/api/threads/${thread.id}/messages/${asked.userMessage.id}`, {
      method: 'DELETE',
      token: helpers.token,
    });
    expect(forget.status).toBe(200);
    const run = await getRun(runId);
    expect(run.status).toBe('failed');
    expect(JSON.stringify(run)).not.toContain(SECRET);
    const stored = await server.app.application.db.toolRun.findUniqueOrThrow({ where: { id: runId } });
    expect(JSON.stringify(stored)).not.toContain(SECRET);
  });
});
