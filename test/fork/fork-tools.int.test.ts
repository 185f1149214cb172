import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool } from '../../src/core/tools';
import type { ThreadDto, ToolRunDto } from '../../src/shared/api';
import { useChatServer } from '../support/chat-server';
import { lastUserText, replyWithText, replyWithToolCalls, type StubRequest } from '../support/openai-stub';
import { waitFor } from '../support/wait-for';
import { query } from '../memory/memory-test-kit';
import {
  classifyRequest,
  isServerNote,
  responder,
  testTools,
  threadHelpers,
  type ThreadHelpers,
} from '../tools/tool-test-kit';

let release = () => {};
const gate = new Promise<void>((resolve) => {
  release = resolve;
});

function chat(request: StubRequest) {
  // A tool result or a server note (async results arrive as user-level text labelled [Server note: …]) asks for the follow-up.
  const last = request.body.messages.at(-1);
  if (last?.role !== 'user' || isServerNote(last)) return replyWithText('Noted the tool result.');
  const user = lastUserText(request.body);
  if (user === 'big background report') return replyWithToolCalls([{ name: 'big_async_report', arguments: {} }]);
  if (user === 'gated') return replyWithToolCalls([{ name: 'gated_async', arguments: {} }]);
  const read = /^read (\S+)$/.exec(user);
  if (read)
    return replyWithToolCalls([
      { name: 'read_tool_result', arguments: { handle: read[1], offset: 149_990, length: 40 } },
    ]);
  return replyWithText(`plain answer to ${user}`);
}

describe('async tool runs and forks', () => {
  const gated = defineTool({
    name: 'gated_async',
    description: 'Finishes when the test lets it.',
    mode: 'async',
    schema: z.object({}),
    async run() {
      await gate;
      return 'GATED-RESULT ID-5';
    },
  });
  const server = useChatServer({
    stub: { classifyRequest, responder: responder(chat) },
    env: { TOOL_RESULT_INLINE_TOKENS: '60' },
    app: { tuning: { extraTools: [...testTools(), gated] } },
  });
  // Registered after the fixture, so it runs before the fixture's afterAll (hooks stack): the gated run ends first.
  afterAll(() => release());
  let helpers: ThreadHelpers;
  beforeAll(async () => {
    helpers = await threadHelpers(server.app);
  });

  const runIdOf = (content: string | undefined) => /as run ([0-9a-f-]{36})/.exec(content ?? '')?.[1] ?? '';
  const runOf = async (runId: string) =>
    (await (await server.app.api(`/api/tool-runs/${runId}`, { token: helpers.token })).json()) as ToolRunDto;

  it('copies reported runs with their own records (handles work in the fork); a run pending at the fork reports to the parent only', async () => {
    const parent = await helpers.newThread();
    const started = await helpers.send(parent.id, 'big background report');
    const reportRun = runIdOf(started.messages.find((message) => message.role === 'tool')?.content);
    expect(reportRun).not.toBe('');
    // Reported, and its follow-up answered.
    await waitFor(
      async () => {
        const messages = await helpers.messages(parent.id);
        const note = messages.find((message) => message.role === 'system' && message.toolRunId === reportRun);
        return (
          note?.status === 'complete' &&
          messages.at(-1)?.role === 'assistant' &&
          messages.at(-1)?.status === 'complete' &&
          (messages.at(-1)?.seq ?? 0) > (note.seq ?? 0)
        );
      },
      { timeoutMs: 30_000, what: 'the report run delivered' },
    );
    const gatedAnswer = await helpers.send(parent.id, 'gated');
    const gatedRun = runIdOf(gatedAnswer.messages.find((message) => message.role === 'tool')?.content);
    expect((await runOf(gatedRun)).status).toMatch(/queued|running/);

    const response = await server.app.api(`/api/threads/${parent.id}/fork`, {
      method: 'POST',
      token: helpers.token,
      json: { atMessageId: gatedAnswer.messages.at(-1)?.id },
    });
    expect(response.status).toBe(201);
    const fork = (await response.json()) as ThreadDto;

    // The reported run has its own record in the fork, tied to the fork's copies; the pending one stays the parent's.
    const runs = await query<{
      id: string;
      origin_run_id: string;
      status: string;
      message_in_fork: boolean;
      note_in_fork: boolean;
    }>(
      server.app,
      `
      SELECT r.id, r.origin_run_id, r.status,
        EXISTS (SELECT 1 FROM messages m WHERE m.id = r.message_id AND m.thread_id = r.thread_id) AS message_in_fork,
        EXISTS (SELECT 1 FROM messages m WHERE m.tool_run_id = r.id AND m.thread_id = r.thread_id AND m.role = 'system') AS note_in_fork
      FROM tool_runs r WHERE r.thread_id = $1`,
      [fork.id],
    );
    expect(runs).toEqual([
      {
        id: expect.any(String),
        origin_run_id: reportRun,
        status: 'succeeded',
        message_in_fork: true,
        note_in_fork: true,
      },
    ]);
    expect(runs[0]?.id).not.toBe(reportRun);

    // The condensed note names the parent's run id: in the fork it reads the fork's own record.
    const read = await helpers.send(fork.id, `read ${reportRun}`);
    const result = read.messages.find((message) => message.role === 'tool')?.content ?? '';
    expect(result).toContain('MARKER-XYZZY');
    expect(result).not.toContain('No stored tool result');

    // The run pending at the fork reports to the parent only.
    release();
    await waitFor(
      async () =>
        (await helpers.messages(parent.id)).some(
          (message) => message.role === 'system' && message.toolRunId === gatedRun && message.status === 'complete',
        ),
      { timeoutMs: 30_000, what: 'the gated run reported to the parent' },
    );
    await waitFor(async () => (await helpers.messages(parent.id)).at(-1)?.content === 'Noted the tool result.', {
      timeoutMs: 30_000,
      what: "the parent's follow-up",
    });
    const forkMessages = await helpers.messages(fork.id);
    expect(forkMessages.some((message) => message.content.includes('GATED-RESULT'))).toBe(false);
    expect(
      (
        await query<{ n: number }>(server.app, 'SELECT count(*)::int AS n FROM tool_runs WHERE thread_id = $1', [
          fork.id,
        ])
      )[0]?.n,
    ).toBe(1);
  });
});
