import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { RECALL_HEADING, SERVER_NOTE_OPEN } from '../../src/core/context';
import { defineTool } from '../../src/core/tools';
import { wireContentText } from '../../src/llm/count-chat-tokens';
import { memoryKit } from '../memory/memory-test-kit';
import { useChatServer } from '../support/chat-server';
import { lastUserText, replyWithText, replyWithToolCalls, type StubRequest } from '../support/openai-stub';
import { summaryResponder } from '../support/summary-stub';
import { waitFor } from '../support/wait-for';
import { assertRequestsValid, classifyRequest } from '../tools/tool-test-kit';

/** The roles and texts of a request, as a strict chat template reads them. */
const turnsOf = (request: StubRequest) =>
  request.body.messages.map((message) => ({ role: message.role, text: wireContentText(message.content) }));

/** The model: calls a tool when asked to, otherwise answers with the last user text it got. */
function chat(request: StubRequest) {
  const last = turnsOf(request).at(-1)?.text ?? '';
  if (last.startsWith('[Tool result')) return replyWithText(`the tool said: ${last.split('\n')[1] ?? ''}`);
  if (last.startsWith(SERVER_NOTE_OPEN) && last.includes('Result of late_report'))
    return replyWithText('the background report is in');
  const user = lastUserText(request.body);
  if (user === 'echo please') return replyWithToolCalls([{ name: 'quick_echo', arguments: { text: 'ID-42' } }]);
  if (user === 'report in the background please') return replyWithToolCalls([{ name: 'late_report', arguments: {} }]);
  return replyWithText(`noted: ${user.slice(0, 40)}`);
}

describe('CHAT_TEMPLATE_COMPAT=strict against a strict chat template (one system message, alternation, no tool role)', () => {
  const server = useChatServer({
    stub: { classifyRequest, strictTemplate: true, responder: summaryResponder({ chat }) },
    env: { CHAT_TEMPLATE_COMPAT: 'strict', SUMMARY_TRIGGER: 'messages=6', SUMMARY_KEEP: 'messages=2' },
    app: {
      tuning: {
        extraTools: [
          defineTool({
            name: 'quick_echo',
            description: 'Echoes its text.',
            mode: 'inline',
            schema: z.object({ text: z.string() }),
            run: async ({ text }) => `echo ${text}`,
          }),
          defineTool({
            name: 'late_report',
            description: 'A report that arrives later.',
            mode: 'async',
            schema: z.object({}),
            run: async () => {
              await new Promise((resolve) => setTimeout(resolve, 300));
              return 'report: ID-77 shipped';
            },
          }),
        ],
      },
    },
  });
  let kit: ReturnType<typeof memoryKit>;
  let budget: number;

  beforeAll(() => {
    kit = memoryKit(server.app, server.token);
    budget = server.app.application.deps.settings.budget;
  });

  const chats = () => server.stub.requests.filter((request) => request.kind === 'chat');

  it('carries a pinned message and the summary through folds in strictly alternating packs', async () => {
    const thread = await kit.createThread();
    const first = await kit.send(thread.id, 'Keep this: the gate code is 4471-B.');
    expect(
      (
        await server.app.api(`/api/threads/${thread.id}/messages/${first.userMessage.id}/pin`, {
          method: 'POST',
          token: kit.token,
        })
      ).status,
    ).toBe(200);
    for (let turn = 1; turn <= 5; turn += 1) await kit.send(thread.id, `Turn ${turn}: CODE-${600 + turn} noted.`);
    await kit.waitForFoldThrough(thread.id, 6);
    await kit.send(thread.id, 'What is the gate code?');
    const last = turnsOf(chats().at(-1)!);
    expect(last[0]?.role).toBe('system');
    expect(last[0]?.text).toContain('Summary of the conversation so far');
    expect(last.filter((message) => message.role === 'system')).toHaveLength(1);
    // The pinned message (its answer not pinned) opens the first user turn, merged with the window's first user turn
    // when the window starts with one (a later trigger fold that lands before this send may start it on an answer:
    // the pinned message is then a user turn of its own, still in alternation).
    expect(last[1]?.role).toBe('user');
    expect(last[1]?.text.startsWith('Keep this: the gate code is 4471-B.')).toBe(true);
    expect(last.slice(1).every((message, index) => message.role === (index % 2 === 0 ? 'user' : 'assistant'))).toBe(
      true,
    );
    // The per-call parts (here the recall slot) join the newest user turn, after the user's own text.
    expect(last.at(-1)?.role).toBe('user');
    expect(last.at(-1)?.text.startsWith('What is the gate code?\n\n')).toBe(true);
    expect(last.at(-1)?.text).toContain(RECALL_HEADING);
    assertRequestsValid(server.stub, budget);
  });

  it('starts a fresh context that opens with the next user message', async () => {
    const thread = await kit.createThread();
    await kit.send(thread.id, 'old topic one');
    await kit.send(thread.id, 'old topic two');
    expect(
      (await server.app.api(`/api/threads/${thread.id}/context-reset`, { method: 'POST', token: kit.token })).status,
    ).toBe(201);
    await kit.send(thread.id, 'a new topic');
    expect(turnsOf(chats().at(-1)!).map((message) => message.role)).toEqual(['system', 'user']);
    assertRequestsValid(server.stub, budget);
  });

  it('runs tools: calls and results reach the model as alternating text, and a late async result as a server note', async () => {
    const thread = await kit.createThread();
    const echoed = await kit.send(thread.id, 'echo please');
    expect(echoed.messages.at(-1)?.content).toBe('the tool said: echo ID-42');
    const round = turnsOf(chats().at(-1)!);
    expect(round.slice(-2).map((message) => message.role)).toEqual(['assistant', 'user']);
    expect(round.at(-2)?.text).toContain('[Tool call');
    expect(round.some((message) => message.role === 'tool')).toBe(false);

    await kit.send(thread.id, 'report in the background please');
    await waitFor(
      async () =>
        (await kit.transcript(thread.id)).some(
          (message) => message.role === 'assistant' && message.content === 'the background report is in',
        ),
      { timeoutMs: 30_000, what: 'the follow-up answer' },
    );
    const followUp = turnsOf(chats().at(-1)!);
    expect(followUp.at(-1)?.role).toBe('user');
    expect(followUp.at(-1)?.text).toContain('report: ID-77 shipped');
    // The async result is user-level text, labelled as the server's and delimited.
    expect(followUp.at(-1)?.text.startsWith(SERVER_NOTE_OPEN)).toBe(true);
    assertRequestsValid(server.stub, budget);
  });
});
