import { describe, expect, it } from 'vitest';
import { ModelCallError } from '../../src/core/errors/model-call-error';
import type { ChatModelPort, ChatResult } from '../../src/core/ports';
import {
  contractConversation,
  contractConversationView,
  contractPrompt,
  contractTools,
  textReply,
  type MakeScriptedPort,
} from './model-port-fixtures';

/** The error a call rejected with (the test fails if it resolved). */
export async function rejection(call: Promise<unknown>): Promise<unknown> {
  return call.then(
    (result) => {
      throw new Error(`expected the call to fail, it answered ${JSON.stringify(result)}`);
    },
    (error: unknown) => error,
  );
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A call of the port recording its deltas. */
async function streamed(
  port: ChatModelPort,
  input: Partial<Parameters<ChatModelPort['stream']>[0]> = {},
): Promise<{ result: ChatResult; deltas: string[] }> {
  const deltas: string[] = [];
  const result = await port.stream({
    messages: contractPrompt,
    signal: new AbortController().signal,
    onDelta: (text) => deltas.push(text),
    ...input,
  });
  return { result, deltas };
}

/** A port aborted by the caller fails as the core's aborted ModelCallError, never as a provider failure. */
function expectAborted(error: unknown): void {
  expect(error).toBeInstanceOf(ModelCallError);
  expect(error).toMatchObject({ kind: 'aborted', retryable: false });
}

/** What every port keeps, whatever it answers: asked with any prompt, so the offline model runs it too. */
function describeAnsweringCases(makePort: () => Promise<ChatModelPort>): void {
  it('streams its answer as deltas that, joined in order, are the result text', async () => {
    const { result, deltas } = await streamed(await makePort());
    expect(result.text.length).toBeGreaterThan(0);
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.join('')).toBe(result.text);
  });

  it('reports usage as whole token counts (cached tokens a count, or null when the provider did not say)', async () => {
    const { result } = await streamed(await makePort());
    expect(result.usage).not.toBeNull();
    const usage = result.usage!;
    expect(Number.isInteger(usage.promptTokens) && usage.promptTokens > 0).toBe(true);
    expect(Number.isInteger(usage.completionTokens) && usage.completionTokens > 0).toBe(true);
    if (usage.cachedTokens !== null && usage.cachedTokens !== undefined)
      expect(usage.cachedTokens).toBeLessThanOrEqual(usage.promptTokens);
  });

  it('refuses a call whose signal has already fired, as aborted, without a delta', async () => {
    const controller = new AbortController();
    controller.abort();
    const deltas: string[] = [];
    const error = await rejection(
      (await makePort()).stream({
        messages: contractPrompt,
        signal: controller.signal,
        onDelta: (text) => deltas.push(text),
      }),
    );
    expectAborted(error);
    expect(deltas).toEqual([]);
  });

  it('stops at an abort mid-answer: it rejects as aborted and no delta follows', async () => {
    const controller = new AbortController();
    const deltas: string[] = [];
    const error = await rejection(
      (await makePort()).stream({
        messages: contractPrompt,
        signal: controller.signal,
        onDelta: (text) => {
          deltas.push(text);
          controller.abort();
        },
      }),
    );
    expectAborted(error);
    // However long the rest of the answer would have taken to stream, nothing arrives after the abort.
    await pause(300);
    expect(deltas).toHaveLength(1);
  });

  it("rethrows an error of the caller's onDelta as it is (a subscriber's bug is not a provider failure)", async () => {
    const bug = new Error('subscriber bug');
    const error = await rejection(
      (await makePort()).stream({
        messages: contractPrompt,
        signal: new AbortController().signal,
        onDelta: () => {
          throw bug;
        },
      }),
    );
    expect(error).toBe(bug);
  });
}

/** What a port whose provider answers a script must do with each answer. */
function describeScriptedCases(makePort: MakeScriptedPort<ChatModelPort>): void {
  it('streams the provider text chunk by chunk, in order, and returns it whole', async () => {
    const chunks = ['Hello', ', wor', 'ld! ', 'Ünïcode ✓', ' and the end.'];
    const { port } = await makePort([textReply(chunks)]);
    const { result, deltas } = await streamed(port);
    expect(deltas.join('')).toBe(chunks.join(''));
    expect(result.text).toBe(chunks.join(''));
    expect(result.toolCalls).toEqual([]);
  });

  it('returns a tool call with its id, name and parsed arguments', async () => {
    const { port } = await makePort([
      {
        type: 'tool-calls',
        calls: [{ id: 'call_abc', name: 'calculator', arguments: { expression: '2+2', exact: true } }],
      },
    ]);
    const { result } = await streamed(port, { tools: contractTools });
    expect(result.toolCalls).toEqual([
      { id: 'call_abc', name: 'calculator', args: { expression: '2+2', exact: true } },
    ]);
    expect(result.invalidToolCalls ?? []).toEqual([]);
  });

  it('puts a call whose arguments are not JSON in invalidToolCalls, beside the valid one, instead of failing', async () => {
    const { port } = await makePort([
      {
        type: 'tool-calls',
        calls: [
          { id: 'call_ok', name: 'current_time', arguments: {} },
          { id: 'call_bad', name: 'calculator', arguments: '{"expression": 2+' },
        ],
      },
    ]);
    const { result } = await streamed(port, { tools: contractTools });
    expect(result.toolCalls).toEqual([{ id: 'call_ok', name: 'current_time', args: {} }]);
    expect(result.invalidToolCalls).toEqual([
      { id: 'call_bad', name: 'calculator', rawArguments: '{"expression": 2+', error: expect.any(String) },
    ]);
  });

  it("sends the tools with toolChoice 'none' (the model must not call one), and without it lets the model call", async () => {
    const { port, received } = await makePort([textReply(['No ', 'tools.']), textReply(['Tools ', 'allowed.'])]);
    await streamed(port, { tools: contractTools, toolChoice: 'none' });
    await streamed(port, { tools: contractTools });
    const [refused, allowed] = received();
    expect(refused).toMatchObject({ tools: ['calculator', 'current_time'], toolChoice: 'none' });
    expect(allowed?.tools).toEqual(['calculator', 'current_time']);
    expect(allowed?.toolChoice).not.toBe('none');
  });

  it("reports the provider's usage: prompt, completion and cached tokens", async () => {
    const usage = { promptTokens: 1800, completionTokens: 9, cachedTokens: 1536 };
    const { port } = await makePort([textReply(['Cached ', 'answer.'], { usage })]);
    const { result } = await streamed(port);
    expect(result.usage).toMatchObject(usage);
  });

  it('sends the messages in order: system, user, the assistant tool call, its result, the answer, the question', async () => {
    const { port, received } = await makePort([textReply(['It ', 'is 6.'])]);
    await streamed(port, { messages: contractConversation, tools: contractTools });
    expect(received()[0]?.messages).toEqual(contractConversationView);
  });

  it("surfaces a provider's 429 as a retryable rate_limited ModelCallError with the wait asked for", async () => {
    const { port } = await makePort([{ type: 'error', status: 429, retryAfterSeconds: 3 }]);
    const error = await rejection(streamed(port));
    expect(error).toBeInstanceOf(ModelCallError);
    expect(error).toMatchObject({ kind: 'rate_limited', retryable: true, retryAfterMs: 3000 });
  });

  it("surfaces a provider's 500 as a retryable server ModelCallError", async () => {
    const { port } = await makePort([{ type: 'error', status: 500 }]);
    const error = await rejection(streamed(port));
    expect(error).toBeInstanceOf(ModelCallError);
    expect(error).toMatchObject({ kind: 'server', retryable: true });
  });
}

/** A provider answer of several chunks, slow enough that an abort lands mid-answer. */
const answeringScript = () => [
  textReply(['One ', 'two ', 'three ', 'four ', 'five ', 'six ', 'seven.'], {
    chunkDelayMs: 30,
    usage: { promptTokens: 40, completionTokens: 7, cachedTokens: 0 },
  }),
];

/**
 * The ChatModelPort contract (the turn's model: what the user sees stream, the tools it may call, the usage billed,
 * the errors the turn retries). `makePort(script)` returns a port whose provider answers `script`, one reply per call.
 * `scriptable: false` is for a port that answers by itself (the offline model: it is not a language model and cannot
 * be told what to say); it runs only the cases that hold whatever the answer.
 */
export function describeChatModelPortContract(
  label: string,
  makePort: MakeScriptedPort<ChatModelPort>,
  options: { scriptable?: boolean } = {},
): void {
  describe(`ChatModelPort contract: ${label}`, () => {
    describeAnsweringCases(async () => (await makePort(answeringScript())).port);
    if (options.scriptable !== false) describeScriptedCases(makePort);
  });
}
