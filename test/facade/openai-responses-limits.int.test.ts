import type OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { wireContentText } from '../../src/llm/count-chat-tokens';
import { useChatServer } from '../support/chat-server';
import { echoResponder, replyWithText, replyWithToolCalls, type StubResponder } from '../support/openai-stub';
import { openaiClient } from './facade-kit';

/** Calls the client's `lookup` tool for every user message; given its result, answers from it. */
const lookup: StubResponder = (request) => {
  const last = request.body.messages.at(-1);
  if (last?.role === 'tool') return replyWithText(`Found: ${wireContentText(last.content)}`);
  if ((request.body.tools ?? []).some((tool) => tool.function.name === 'lookup'))
    return replyWithToolCalls([{ id: `call_${request.index}`, name: 'lookup', arguments: {} }]);
  return echoResponder(request);
};

const server = useChatServer({
  stub: { responder: lookup },
  env: { RATE_LIMIT_PER_MINUTE: '2', TOOL_ROUNDS_PER_MINUTE: '1' },
});

const tools: OpenAI.Responses.FunctionTool[] = [
  { type: 'function', name: 'lookup', parameters: { type: 'object', properties: {} }, strict: false },
];

async function ask(client: OpenAI, input: string): Promise<OpenAI.Responses.Response> {
  return client.responses.create({ model: 'gpt-4o-mini', input, tools });
}

async function answerCall(client: OpenAI, previous: OpenAI.Responses.Response): Promise<OpenAI.Responses.Response> {
  const call = previous.output.find(
    (item) => item.type === 'function_call',
  ) as OpenAI.Responses.ResponseFunctionToolCall;
  return client.responses.create({
    model: 'gpt-4o-mini',
    tools,
    previous_response_id: previous.id,
    input: [{ type: 'function_call_output', call_id: call.call_id, output: 'the result' }],
  });
}

describe('tool rounds have their own limit (TOOL_ROUNDS_PER_MINUTE)', () => {
  it('a request only bringing function_call_output items spends the tool-round limit, not the send limit', async () => {
    const client = openaiClient(server);
    const first = await ask(client, 'look up one');
    expect((await answerCall(client, first)).output_text).toBe('Found: the result');
    // The tool round did not spend the send limit (2 a minute): a second question still goes through.
    const second = await ask(client, 'look up two');
    // The second tool round is over its own limit (1 a minute).
    await expect(answerCall(client, second)).rejects.toMatchObject({ status: 429, code: 'rate_limit_exceeded' });
    // And the send limit is spent by the two questions.
    await expect(ask(client, 'look up three')).rejects.toMatchObject({ status: 429, code: 'rate_limit_exceeded' });
  });
});
