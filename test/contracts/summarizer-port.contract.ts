import { describe, expect, it } from 'vitest';
import type { PackMessage } from '../../src/core/context/types';
import { ModelCallError } from '../../src/core/errors/model-call-error';
import type { SummarizerPort } from '../../src/core/ports';
import { rejection } from './chat-model-port.contract';
import {
  contractConversation,
  contractConversationView,
  contractTools,
  textReply,
  type MakeScriptedPort,
} from './model-port-fixtures';

/** A fold's prompt: instructions, then the messages to fold. */
const foldPrompt: PackMessage[] = [
  { role: 'system', content: 'Summarize the conversation below in at most 200 tokens.', tokens: 0 },
  { role: 'user', content: 'Alice booked flight ZX-418 to Zanzibar for 12 March.', tokens: 0, seq: 1 },
  { role: 'assistant', content: 'Noted: ZX-418 on 12 March.', tokens: 0, seq: 2 },
  { role: 'user', content: 'Bob decided the budget is 2,400 euros.', tokens: 0, seq: 3 },
];

/** What every summarizer keeps, whatever it answers (the offline summarizer runs these too). */
function describeAnsweringCases(makePort: () => Promise<SummarizerPort>): void {
  it('returns a summary text and whole-token usage', async () => {
    const result = await (await makePort()).summarize({ messages: foldPrompt });
    expect(result.text.trim().length).toBeGreaterThan(0);
    expect(result.toolCalls).toEqual([]);
    expect(Number.isInteger(result.usage?.promptTokens) && result.usage!.promptTokens > 0).toBe(true);
    expect(Number.isInteger(result.usage?.completionTokens) && result.usage!.completionTokens > 0).toBe(true);
  });

  it('refuses a call whose signal has already fired, as aborted', async () => {
    const controller = new AbortController();
    controller.abort();
    const error = await rejection((await makePort()).summarize({ messages: foldPrompt, signal: controller.signal }));
    expect(error).toBeInstanceOf(ModelCallError);
    expect(error).toMatchObject({ kind: 'aborted', retryable: false });
  });
}

function describeScriptedCases(makePort: MakeScriptedPort<SummarizerPort>): void {
  it('returns the text the provider streamed, whole and in order', async () => {
    const chunks = ['- Alice: flight ', 'ZX-418, 12 March.', '\n- Bob: budget ', '2,400 euros.'];
    const { port } = await makePort([textReply(chunks)]);
    const result = await port.summarize({ messages: foldPrompt });
    expect(result.text).toBe(chunks.join(''));
  });

  it("sends a continued fold's tools with toolChoice 'none', and its messages in order", async () => {
    const { port, received } = await makePort([textReply(['Summary.'])]);
    await port.summarize({ messages: contractConversation, tools: contractTools, toolChoice: 'none' });
    expect(received()[0]).toEqual({
      messages: contractConversationView,
      tools: ['calculator', 'current_time'],
      toolChoice: 'none',
    });
  });

  it("reports the provider's usage: prompt, completion and cached tokens", async () => {
    const usage = { promptTokens: 2400, completionTokens: 120, cachedTokens: 2048 };
    const { port } = await makePort([textReply(['Summary ', 'text.'], { usage })]);
    const result = await port.summarize({ messages: foldPrompt });
    expect(result.usage).toMatchObject(usage);
  });

  // The whole answer takes half a second to stream: a call that ignored the abort would resolve with it.
  it('stops at an abort mid-answer, as aborted', async () => {
    const { port } = await makePort([
      textReply(['a ', 'b ', 'c ', 'd ', 'e ', 'f ', 'g ', 'h ', 'i ', 'j.'], { chunkDelayMs: 50 }),
    ]);
    const error = await rejection(port.summarize({ messages: foldPrompt, signal: AbortSignal.timeout(100) }));
    expect(error).toBeInstanceOf(ModelCallError);
    expect(error).toMatchObject({ kind: 'aborted', retryable: false });
  });

  it("surfaces a provider's 429 and 500 as retryable ModelCallErrors (rate_limited with its wait, server)", async () => {
    const { port } = await makePort([
      { type: 'error', status: 429, retryAfterSeconds: 2 },
      { type: 'error', status: 500 },
    ]);
    const limited = await rejection(port.summarize({ messages: foldPrompt }));
    expect(limited).toBeInstanceOf(ModelCallError);
    expect(limited).toMatchObject({ kind: 'rate_limited', retryable: true, retryAfterMs: 2000 });
    const failed = await rejection(port.summarize({ messages: foldPrompt }));
    expect(failed).toBeInstanceOf(ModelCallError);
    expect(failed).toMatchObject({ kind: 'server', retryable: true });
  });
}

/**
 * The SummarizerPort contract (folds, condensed tool results, titles). `makePort(script)` as in the ChatModelPort
 * contract; `scriptable: false` (the offline summarizer, which summarizes by itself) runs only the cases that hold
 * whatever the summary says.
 */
export function describeSummarizerPortContract(
  label: string,
  makePort: MakeScriptedPort<SummarizerPort>,
  options: { scriptable?: boolean } = {},
): void {
  describe(`SummarizerPort contract: ${label}`, () => {
    describeAnsweringCases(
      async () =>
        (
          await makePort([
            textReply(['Alice: flight ZX-418, 12 March. ', 'Bob: budget 2,400 euros.'], {
              usage: { promptTokens: 60, completionTokens: 14, cachedTokens: 0 },
            }),
          ])
        ).port,
    );
    if (options.scriptable !== false) describeScriptedCases(makePort);
  });
}
