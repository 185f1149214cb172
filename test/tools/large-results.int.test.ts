import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { countTextTokens } from '../../src/llm/count-chat-tokens';
import type { ContextPackDto, MessageContextDto, ThreadDto } from '../../src/shared/api';
import {
  lastUserText,
  replyWithText,
  replyWithToolCalls,
  startOpenAIStub,
  type OpenAIStub,
  type StubRequest,
} from '../support/openai-stub';
import { startTestApp, type TestApp } from '../support/test-app';
import { waitFor } from '../support/wait-for';
import {
  assertRequestsValid,
  bigReport,
  classifyRequest,
  lastMessage,
  responder,
  testTools,
  textOf,
  threadHelpers,
  isServerNote,
  serverNoteText,
  type ThreadHelpers,
} from './tool-test-kit';

const INLINE_TOKENS = 300;
const READ_AT = 149_990;
const LONG_NOTE = 'please include every row, '.repeat(100);

/** The model: asks for a report, then reads a part of it through read_tool_result by the handle it was given. */
function chat(request: StubRequest) {
  const last = lastMessage(request);
  const text = textOf(last);
  // The handle line of the result just condensed, or one the user pasted (a recall slot may follow the user's text).
  const pattern = /read_tool_result\(handle="([0-9a-f-]{36})", offset, length\)/;
  const handle = last?.role === 'user' ? pattern.exec(lastUserText(request.body))?.[1] : pattern.exec(text)?.[1];
  if (handle)
    return replyWithToolCalls([{ name: 'read_tool_result', arguments: { handle, offset: READ_AT, length: 40 } }]);
  if (last?.role === 'tool' && text.startsWith('Characters ')) return replyWithText('I read the part you asked about.');
  if (last?.role === 'tool') return replyWithText('The report is being prepared.');
  const user = lastUserText(request.body);
  if (user === 'report please') return replyWithToolCalls([{ name: 'big_report', arguments: { note: LONG_NOTE } }]);
  if (user === 'background report please') return replyWithToolCalls([{ name: 'big_async_report', arguments: {} }]);
  return replyWithText(`plain answer to ${user}`);
}

describe('large tool results', () => {
  let stub: OpenAIStub;
  let app: TestApp;
  let helpers: ThreadHelpers;
  let budget: number;
  const report = bigReport();

  beforeAll(async () => {
    stub = await startOpenAIStub({ classifyRequest, responder: responder(chat), maxContextTokens: 8000 });
    app = await startTestApp({
      env: {
        OPENAI_BASE_URL: stub.url,
        CONTEXT_MAX_INPUT_TOKENS: '8000',
        TOOL_RESULT_INLINE_TOKENS: String(INLINE_TOKENS),
        SUMMARY_INPUT_MAX_TOKENS: '4000',
        SUMMARY_TRIGGER: 'tokens=4000',
        SUMMARY_KEEP: 'messages=6',
      },
      tuning: { extraTools: testTools() },
    });
    helpers = await threadHelpers(app);
    budget = app.application.deps.settings.budget;
  });
  beforeEach(() => stub.reset());
  afterAll(async () => {
    await app?.stop();
    await stub?.close();
  });

  it('condenses a 200 KB inline result in the pack, keeps it whole in the transcript, and reads any part of it', async () => {
    const thread = await helpers.newThread();
    const result = await helpers.send(thread.id, 'report please');
    expect(result.turn.status).toBe('complete');
    expect(result.messages.map((message) => message.role)).toEqual([
      'assistant',
      'tool',
      'assistant',
      'tool',
      'assistant',
    ]);
    const [, reportMessage, , readMessage, answer] = result.messages;
    expect(reportMessage?.content).toBe(report);

    const chats = stub.requests.filter((request) => request.kind === 'chat');
    const seen = textOf(lastMessage(chats[1]!));
    expect(seen).toMatch(
      /^\[Condensed from \d+ tokens \(the first \d+ characters were condensed\)\]\nCONDENSED: ORD-10000/,
    );
    expect(seen).toContain(`read_tool_result(handle="${reportMessage?.id}", offset, length)`);
    expect(countTextTokens(seen)).toBeLessThanOrEqual(INLINE_TOKENS);
    // The summary model read the result in parts, each within its input budget.
    const condenseCalls = stub.requests.filter((request) => request.kind === 'condense');
    expect(condenseCalls.length).toBeGreaterThan(1);
    expect(condenseCalls.length).toBeLessThanOrEqual(8);
    expect(condenseCalls.every((request) => request.promptTokens <= 4000)).toBe(true);

    expect(readMessage?.content).toBe(
      `Characters ${READ_AT}–${READ_AT + 40} of ${report.length} of the result of tool call ${reportMessage?.toolCallId} (${reportMessage?.id}):\n${report.slice(READ_AT, READ_AT + 40)}\n[Continue with read_tool_result(handle="${reportMessage?.id}", offset=${READ_AT + 40})]`,
    );
    expect(readMessage?.content).toContain('MARKER-XYZZY');
    expect(answer?.content).toBe('I read the part you asked about.');

    // The next turn's pack shortens the long arguments of the old call; the transcript keeps them.
    await helpers.send(thread.id, 'thanks');
    const next = stub.requests.filter((request) => request.kind === 'chat').at(-1)!;
    const oldCall = next.body.messages.find(
      (message) => message.role === 'assistant' && message.tool_calls?.[0]?.function?.name === 'big_report',
    );
    const shortenedArgs = oldCall?.tool_calls?.[0]?.function?.arguments ?? '';
    expect(shortenedArgs.length).toBeLessThan(800);
    expect(shortenedArgs).toContain('characters of arguments; the full call is message #');
    const transcript = await helpers.messages(thread.id);
    expect(transcript.find((message) => message.id === result.messages[0]?.id)?.toolCalls?.[0]?.args).toEqual({
      note: LONG_NOTE,
    });
    assertRequestsValid(stub, budget);

    // "What the model saw" for the answer that read the report keeps the condensed text the model got, also once a
    // fold deleted the window entry that held it.
    const seenBy = async () =>
      (await (
        await app.api(`/api/threads/${thread.id}/messages/${result.messages[2]?.id}/context`, { token: helpers.token })
      ).json()) as MessageContextDto;
    const reportResult = {
      seq: reportMessage?.seq,
      role: 'tool',
      toolCallId: reportMessage?.toolCallId,
      content: seen,
      forgotten: false,
    };
    expect((await seenBy()).toolResults).toEqual([expect.objectContaining(reportResult)]);
    expect(
      (
        await app.api(`/api/threads/${thread.id}/settings`, {
          method: 'PATCH',
          token: helpers.token,
          json: { keep: 'messages=1' },
        })
      ).status,
    ).toBe(200);
    expect(
      (
        await app.api(`/api/admin/threads/${thread.id}/summarize`, {
          method: 'POST',
          token: 'test-admin-token-0123456789',
        })
      ).status,
    ).toBe(202);
    await waitFor(
      async () => {
        const context = (await (
          await app.api(`/api/threads/${thread.id}/context`, { token: helpers.token })
        ).json()) as ContextPackDto;
        return (context.summary?.coveredThroughSeq ?? 0) >= (reportMessage?.seq ?? Infinity);
      },
      { timeoutMs: 30_000, what: 'a fold past the report' },
    );
    expect((await seenBy()).toolResults).toEqual([expect.objectContaining(reportResult)]);
  });

  it('offers read_tool_result only where a condensed result is in the context; a fork reads its copy by the handle', async () => {
    const toolNames = (request: StubRequest | undefined) => request?.body.tools?.map((tool) => tool.function.name);
    const thread = await helpers.newThread();
    await helpers.send(thread.id, 'hello');
    // Nothing in the chat is condensed: the tool has nothing to read, and its schema is not in the prompt.
    // (The chat calls: the title request after a first exchange offers no tools.)
    const toolCalls = () => stub.requests.filter((request) => request.kind === 'chat' && request.body.tools);
    const hello = toolCalls().at(-1);
    expect(toolNames(hello)).toContain('big_report');
    expect(toolNames(hello)).not.toContain('read_tool_result');
    stub.reset();
    const result = await helpers.send(thread.id, 'report please');
    const reportMessage = result.messages[1];
    const chats = toolCalls();
    // The round that called the report was not offered it; the round that got the condensed result is, and reads.
    expect(toolNames(chats[0])).not.toContain('read_tool_result');
    expect(toolNames(chats[1])).toContain('read_tool_result');
    expect(result.messages[3]?.content).toContain('MARKER-XYZZY');

    // A fork at the report copies the condensed text with its handle (the parent's message id): the fork's own copy
    // of the result answers it.
    const response = await app.api(`/api/threads/${thread.id}/fork`, {
      method: 'POST',
      token: helpers.token,
      json: { atMessageId: reportMessage?.id },
    });
    expect(response.status).toBe(201);
    const forked = (await response.json()) as ThreadDto;
    const handleText = `read_tool_result(handle="${reportMessage?.id}", offset, length)`;
    const read = await helpers.send(forked.id, handleText);
    const readResult = read.messages.find((message) => message.role === 'tool');
    expect(readResult?.content).toContain('MARKER-XYZZY');

    // A thread that did not copy it cannot read the handle, even with a condensed result of its own.
    const other = await helpers.newThread();
    await helpers.send(other.id, 'report please');
    const unrelated = await helpers.send(other.id, handleText);
    expect(unrelated.messages.find((message) => message.role === 'tool')?.content).toContain('No stored tool result');
  });

  it('condenses a 200 KB async result in the worker before the follow-up, readable through the run handle', async () => {
    const thread = await helpers.newThread();
    const result = await helpers.send(thread.id, 'background report please');
    const runId = /as run ([0-9a-f-]{36})/.exec(result.messages[1]?.content ?? '')?.[1];
    await waitFor(() => stub.requests.some((request) => textOf(lastMessage(request)).startsWith('Characters ')), {
      timeoutMs: 30_000,
      what: 'the follow-up reading the result',
    });
    const followUp = stub.requests.find((request) => request.kind === 'chat' && isServerNote(lastMessage(request)))!;
    const note = serverNoteText(lastMessage(followUp));
    expect(note).toMatch(
      new RegExp(`^Result of big_async_report \\(run ${runId}, started at seq \\d+\\):\\n\\[Condensed from`),
    );
    expect(note).toContain(`read_tool_result(handle="${runId}", offset, length)`);
    expect(countTextTokens(note)).toBeLessThanOrEqual(INLINE_TOKENS + 40);
    const read = textOf(
      lastMessage(stub.requests.find((request) => textOf(lastMessage(request)).startsWith('Characters '))!),
    );
    expect(read).toContain(`of the result of big_async_report (${runId}):\n${report.slice(READ_AT, READ_AT + 40)}`);
    // The transcript keeps the full result on the run's message.
    await waitFor(
      async () =>
        (await helpers.messages(thread.id)).some(
          (message) => message.toolRunId === runId && message.status === 'complete',
        ),
      { what: 'the run message' },
    );
    const stored = (await helpers.messages(thread.id)).find(
      (message) => message.toolRunId === runId && message.role === 'system',
    );
    expect(stored?.content).toBe(
      `Result of big_async_report (run ${runId}, started at seq ${result.messages[0]?.seq}):\n${report}`,
    );
    assertRequestsValid(stub, budget);
  });
});
