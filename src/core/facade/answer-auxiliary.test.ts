import { describe, expect, it, vi } from 'vitest';
import { createTokenCounter } from '../context/token-counter';
import type { PackMessage } from '../context/types';
import { createMemoryRateLimiter } from '../limits/rate-limiter';
import type { ClientMessage, ModelCallRecord } from '../ports';
import {
  createScriptedChatModel,
  scriptedFailure,
  scriptedText,
  type ScriptedReply,
} from '../../../test/fakes/scripted-chat-model';
import { answerAuxiliary, isAuxiliaryRequest, type AuxiliaryDeps } from './answer-auxiliary';
import { CLIENT_INSTRUCTIONS_HEADING } from '../context/client-instructions';

const user = (content: string): ClientMessage => ({ role: 'user', content });
const TITLE =
  '### Task:\nGenerate a concise, 3-5 word title with an emoji summarizing the chat history.\n### Chat History:\n<chat_history>\nUSER: hi\nASSISTANT: hello\n</chat_history>';

describe('isAuxiliaryRequest', () => {
  it('recognises one user message beginning with a prefix (leading white space aside)', () => {
    expect(isAuxiliaryRequest([user(TITLE)], ['### Task:'])).toBe(true);
    expect(isAuxiliaryRequest([user(`\n  ${TITLE}`)], ['### Task:'])).toBe(true);
    expect(isAuxiliaryRequest([user('Write a title: hi')], ['### Task:', 'Write a title:'])).toBe(true);
  });

  it('leaves conversations alone: more messages, another prefix, a prefix inside the text, no prefixes', () => {
    expect(
      isAuxiliaryRequest(
        [user('hello'), { role: 'assistant', content: 'hi', toolCalls: [] }, user(TITLE)],
        ['### Task:'],
      ),
    ).toBe(false);
    expect(isAuxiliaryRequest([user('Please read: ### Task: something')], ['### Task:'])).toBe(false);
    expect(isAuxiliaryRequest([user('### task: lower case')], ['### Task:'])).toBe(false);
    expect(isAuxiliaryRequest([user(TITLE)], [])).toBe(false);
    expect(isAuxiliaryRequest([user(TITLE)], [''])).toBe(false);
  });
});

const SYSTEM_PROMPT = 'You are the operator-configured assistant.';
const silent = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

/** Deps over a real token counter whose every method is spied on (each count reaches the encoder or its cache). */
function auxiliaryKit(options: { limit?: number; reply?: ScriptedReply } = {}) {
  const counter = createTokenCounter('o200k_base');
  const counts = [
    vi.spyOn(counter, 'countText'),
    vi.spyOn(counter, 'countMessage'),
    vi.spyOn(counter, 'countPack'),
    vi.spyOn(counter, 'countToolSchemas'),
  ];
  const chat = createScriptedChatModel({
    model: 'gpt-4o-mini',
    fallback:
      options.reply ??
      scriptedText(['Tulips 🌷'], { usage: { promptTokens: 90, completionTokens: 4, cachedTokens: null } }),
  });
  const recorded: ModelCallRecord[] = [];
  const deps: AuxiliaryDeps = {
    chat,
    sendLimiter: createMemoryRateLimiter({ limit: options.limit ?? 10 }),
    settings: { counter, budget: 10_000, systemPrefix: SYSTEM_PROMPT },
    maxMessageChars: 1000,
    timeoutMs: 5000,
    calls: {
      record: async (call) => {
        recorded.push(call);
      },
    },
    log: silent,
  };
  return {
    deps,
    /** The messages each model call was given. */
    get prompts(): PackMessage[][] {
      return chat.calls.map((call) => call.messages);
    },
    recorded,
    countCalls: () => counts.reduce((sum, spy) => sum + spy.mock.calls.length, 0),
  };
}

const request = (content: string, instructions: string | null = null) => ({
  userId: 'user-1',
  instructions,
  content,
  signal: new AbortController().signal,
  onDelta: () => undefined,
});

describe('answerAuxiliary', () => {
  it('refuses a task over MAX_MESSAGE_CHARS before counting a token or calling the model', async () => {
    const kit = auxiliaryKit();
    await expect(answerAuxiliary(request(`${TITLE}${'a'.repeat(1000)}`), kit.deps)).rejects.toMatchObject({
      code: 'TOO_LARGE',
    });
    expect(kit.countCalls()).toBe(0);
    expect(kit.prompts).toEqual([]);
    expect(kit.recorded).toEqual([]);
  });

  it('spends the send limit before counting: a refused request never reaches the counter', async () => {
    const kit = auxiliaryKit({ limit: 1 });
    await answerAuxiliary(request(TITLE), kit.deps);
    const counted = kit.countCalls();
    expect(counted).toBeGreaterThan(0);
    await expect(answerAuxiliary(request(TITLE), kit.deps)).rejects.toMatchObject({ code: 'RATE_LIMITED' });
    expect(kit.countCalls()).toBe(counted);
    expect(kit.prompts).toHaveLength(1);
  });

  it("sends the operator's system prompt, with the client's instructions after it as a thread's prefix holds them", async () => {
    const kit = auxiliaryKit();
    await answerAuxiliary(request(TITLE), kit.deps);
    await answerAuxiliary(request(TITLE, 'Answer in French.'), kit.deps);
    expect(kit.prompts.map((messages) => messages.map(({ role, content }) => ({ role, content })))).toEqual([
      [
        { role: 'system', content: SYSTEM_PROMPT },
        { role: 'user', content: TITLE },
      ],
      [
        { role: 'system', content: `${SYSTEM_PROMPT}${CLIENT_INSTRUCTIONS_HEADING}Answer in French.` },
        { role: 'user', content: TITLE },
      ],
    ]);
  });

  it('records each call for the user (purpose auxiliary, no thread), answered or failed', async () => {
    const kit = auxiliaryKit();
    const answer = await answerAuxiliary(request(TITLE), kit.deps);
    expect(answer.text).toBe('Tulips 🌷');
    const estimated = kit.deps.settings.counter.countPack(kit.prompts[0]!);
    expect(kit.recorded).toEqual([
      expect.objectContaining({
        threadId: null,
        userId: 'user-1',
        messageId: null,
        purpose: 'auxiliary',
        model: 'gpt-4o-mini',
        estimatedPromptTokens: estimated,
        reportedPromptTokens: 90,
        reportedCompletionTokens: 4,
        error: null,
      }),
    ]);

    const failing = auxiliaryKit({
      reply: scriptedFailure('server', true, { message: 'upstream 500 quoting the task' }),
    });
    await expect(answerAuxiliary(request(TITLE), failing.deps)).rejects.toMatchObject({ code: 'PROVIDER_ERROR' });
    expect(failing.recorded).toEqual([
      expect.objectContaining({ purpose: 'auxiliary', userId: 'user-1', reportedPromptTokens: null, error: 'server' }),
    ]);
  });
});
