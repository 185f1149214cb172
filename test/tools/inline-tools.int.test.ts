import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { useChatServer } from '../support/chat-server';
import { replyWithText, replyWithToolCalls, lastUserText, type StubRequest } from '../support/openai-stub';
import {
  assertRequestsValid,
  classifyRequest,
  lastMessage,
  responder,
  testTools,
  textOf,
  threadHelpers,
  type ThreadHelpers,
} from './tool-test-kit';

const probe = { inlineCalls: [] as { name: string; start: number; end: number }[] };

/** The scripted model: the user's text says which tools to call; after tool results it reports them. */
function chat(request: StubRequest) {
  const last = lastMessage(request);
  if (last?.role === 'tool') {
    const results = [];
    for (const message of [...request.body.messages].reverse()) {
      if (message.role !== 'tool') break;
      results.unshift(textOf(message));
    }
    return replyWithText(`Tools said: ${results.join(' | ')}`);
  }
  const user = lastUserText(request.body);
  if (user === 'calc') return replyWithToolCalls([{ name: 'calculator', arguments: { expression: '(17 + 4) * 2' } }]);
  if (user === 'parallel') {
    return replyWithToolCalls(
      [
        { name: 'slow_echo', arguments: { text: 'one', ms: 600 } },
        { name: 'slow_echo', arguments: { text: 'two', ms: 600 } },
        { name: 'calculator', arguments: { expression: '2^10' } },
      ],
      { text: 'Let me check three things. ' },
    );
  }
  if (user === 'failures') {
    return replyWithToolCalls([
      { name: 'explode', arguments: {} },
      { name: 'stuck', arguments: {} },
      { name: 'calculator', arguments: { expresion: '1+1' } },
      { name: 'calculator', arguments: '{"expression": "1+' },
      { name: 'no_such_tool', arguments: {} },
    ]);
  }
  if (user === 'loop') return replyWithToolCalls([{ name: 'calculator', arguments: { expression: '1+1' } }]);
  return replyWithText(`plain answer to ${user}`);
}

describe('inline tools', () => {
  const server = useChatServer({
    stub: { classifyRequest, responder: responder(chat) },
    env: { MAX_TOOL_ROUNDS: '3' },
    app: { tuning: { extraTools: testTools(probe) } },
  });
  let helpers: ThreadHelpers;

  beforeAll(async () => {
    helpers = await threadHelpers(server.app);
  });
  beforeEach(() => server.stub.reset());

  it('runs a round trip: call, tool message, and the model continues with the result', async () => {
    const thread = await helpers.newThread();
    const result = await helpers.send(thread.id, 'calc');
    expect(result.turn.status).toBe('complete');
    expect(result.messages.map((message) => message.role)).toEqual(['assistant', 'tool', 'assistant']);
    const [call, tool, answer] = result.messages;
    expect(call?.toolCalls).toEqual([
      { id: expect.any(String), name: 'calculator', args: { expression: '(17 + 4) * 2' } },
    ]);
    expect(tool?.toolCallId).toBe(call?.toolCalls?.[0]?.id);
    expect(tool?.content).toBe('(17 + 4) * 2 = 42');
    expect(answer?.content).toBe('Tools said: (17 + 4) * 2 = 42');
    // Tools are offered on every chat call (read_tool_result only once a condensed result is in the context: a
    // small result like this one is whole), and the second call carries the exchange.
    const chats = server.stub.requests.filter((request) => request.kind === 'chat');
    expect(chats).toHaveLength(2);
    for (const request of chats) {
      const names = request.body.tools?.map((tool) => tool.function.name);
      expect(names).toEqual(expect.arrayContaining(['calculator', 'current_time', 'analyze_thread']));
      expect(names).not.toContain('read_tool_result');
    }
    expect(chats[1]?.body.messages.slice(-2).map((message) => message.role)).toEqual(['assistant', 'tool']);
    // The transcript keeps the exchange in order, and the next turn's context still holds it.
    const transcript = await helpers.messages(thread.id);
    expect(transcript.map((message) => `${message.seq}:${message.role}`)).toEqual([
      '1:user',
      '2:assistant',
      '3:tool',
      '4:assistant',
    ]);
    await helpers.send(thread.id, 'thanks');
    const next = server.stub.requests.filter((request) => request.kind === 'chat').at(-1);
    expect(next?.body.messages.map((message) => message.role)).toEqual([
      'system',
      'user',
      'assistant',
      'tool',
      'assistant',
      'user',
    ]);
    assertRequestsValid(server.stub, server.app.application.deps.settings.budget);
  });

  it('runs parallel calls concurrently and answers them in call order', async () => {
    const thread = await helpers.newThread();
    probe.inlineCalls.length = 0;
    const result = await helpers.send(thread.id, 'parallel');
    expect(result.messages.map((message) => message.role)).toEqual(['assistant', 'tool', 'tool', 'tool', 'assistant']);
    expect(result.messages[0]?.content).toBe('Let me check three things. ');
    expect(result.messages.slice(1, 4).map((message) => message.content)).toEqual([
      'echo: one',
      'echo: two',
      '2^10 = 1024',
    ]);
    const [one, two] = probe.inlineCalls;
    expect(one && two && one.start < two.end && two.start < one.end).toBe(true);
    expect(result.messages[4]?.content).toBe('Tools said: echo: one | echo: two | 2^10 = 1024');
    assertRequestsValid(server.stub, server.app.application.deps.settings.budget);
  });

  it('reports failing, timed-out, invalid and unknown calls to the model, which recovers', async () => {
    const thread = await helpers.newThread();
    const result = await helpers.send(thread.id, 'failures');
    expect(result.turn.status).toBe('complete');
    const tools = result.messages.filter((message) => message.role === 'tool').map((message) => message.content);
    expect(tools).toEqual([
      // An internal exception's message stays in the server log: the user and the model get a reference.
      expect.stringMatching(
        /^Error: explode failed: an internal error \(reference [0-9a-f]{8}; the details are in the server log\)$/,
      ),
      'Error: stuck did not finish within 300 ms and was stopped.',
      expect.stringMatching(/^Error: Invalid arguments for calculator: expression: /),
      expect.stringMatching(/^Error: There is no tool named no_such_tool\. Available tools: calculator, current_time/),
      // A call whose arguments are not JSON is stored (and answered) after the readable ones.
      expect.stringMatching(/^Error: the arguments of this calculator call were not valid JSON/),
    ]);
    const followUp = server.stub.requests.filter((request) => request.kind === 'chat')[1];
    expect(followUp?.body.messages.filter((message) => message.role === 'tool').map(textOf)).toEqual(tools);
    expect(result.messages.at(-1)?.content).toContain('Tools said: Error: explode failed');
    expect(JSON.stringify(result.messages)).not.toContain('10.0.0.7');
    assertRequestsValid(server.stub, server.app.application.deps.settings.budget);
  });

  it('allows no tool call after MAX_TOOL_ROUNDS rounds (same schemas, tool_choice none), so the turn ends with an answer', async () => {
    const thread = await helpers.newThread();
    server.stub.setResponder(
      responder((request) =>
        request.body.tool_choice !== 'none'
          ? replyWithToolCalls([{ name: 'calculator', arguments: { expression: '1+1' } }])
          : replyWithText('enough tools'),
      ),
    );
    const result = await helpers.send(thread.id, 'loop');
    expect(result.turn.status).toBe('complete');
    const chats = server.stub.requests.filter((request) => request.kind === 'chat');
    expect(chats.map((request) => request.body.tool_choice ?? 'auto')).toEqual(['auto', 'auto', 'auto', 'none']);
    // The tool list is the same on every call of the turn: the provider's prompt cache keeps matching.
    expect(new Set(chats.map((request) => JSON.stringify(request.body.tools))).size).toBe(1);
    expect(result.messages.filter((message) => message.role === 'tool')).toHaveLength(3);
    expect(result.messages.at(-1)?.content).toBe('enough tools');
    assertRequestsValid(server.stub, server.app.application.deps.settings.budget);
  });
});
