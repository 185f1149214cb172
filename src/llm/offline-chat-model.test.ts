import { HumanMessage, SystemMessage } from '@langchain/core/messages';
import { describe, expect, it } from 'vitest';
import { buildContextPack } from '../core/context/build-context-pack.js';
import { buildRecallSlot, RECALL_ELSEWHERE_HEADING, RECALL_HEADING } from '../core/context/build-recall-slot.js';
import type { PackMessage, RecalledMessage } from '../core/context/types.js';
import { countTextTokens } from './count-chat-tokens.js';
import { OfflineChatModel, rememberRequest } from './offline-chat-model.js';
import { streamChat } from './stream-chat.js';

const message = (role: PackMessage['role'], content: string, extra: Partial<PackMessage> = {}): PackMessage => ({
  role,
  content,
  tokens: 0,
  ...extra,
});

const calculatorTool = {
  type: 'function' as const,
  function: {
    name: 'calculator',
    description: 'Evaluates arithmetic',
    parameters: { type: 'object', properties: { expression: { type: 'string' } } },
  },
};

const saveMemoryTool = {
  type: 'function' as const,
  function: {
    name: 'save_memory',
    description: 'Saves a fact about the user',
    parameters: { type: 'object', properties: { text: { type: 'string' } } },
  },
};

const SUMMARY_INSTRUCTIONS =
  'You summarize conversations. Keep names, numbers and identifiers. Answer in at most 120 tokens.';

describe('OfflineChatModel, chat mode', () => {
  it('streams a deterministic restatement in several chunks with usage', async () => {
    const model = new OfflineChatModel();
    const pack = [
      message(
        'system',
        'You are helpful. Earlier parts may reach you as a summary citing [#12].\n\n## Summary of the conversation so far (through message #4)\n- user: order ORD-7731 ships to Lyon.',
      ),
      message('user', 'hi'),
      message('assistant', 'hello'),
      message('user', 'What did I order?'),
    ];
    const deltas: string[] = [];
    const first = await streamChat({ model, messages: pack, onDelta: (text) => deltas.push(text) });
    const second = await streamChat({ model, messages: pack });
    expect(first.text).toBe(second.text);
    expect(deltas.length).toBeGreaterThan(10);
    expect(first.text).toContain('[offline model]');
    expect(first.text).toContain('You said: "What did I order?"');
    expect(first.text).toMatch(/4 messages \(1 system, 2 user, 1 assistant, 0 tool\), \d+ tokens, including a summary/);
    expect(first.text).toMatch(/The summary keeps [^.]*ORD-7731/);
    // Identifiers come from the summary, never from the system prompt's own text; a reply stays short.
    expect(first.text).not.toContain('#12');
    expect(first.text).not.toContain('OPENAI_API_KEY');
    expect(first.text.length).toBeLessThan(260);
    expect(first.finishReason).toBe('stop');
    expect(first.usage?.promptTokens).toBeGreaterThan(20);
    expect(first.usage?.completionTokens).toBe(countTextTokens(first.text));
  });

  it('says when there is no summary', async () => {
    const result = await streamChat({
      model: new OfflineChatModel(),
      messages: [message('system', 'You are helpful.'), message('user', 'hello')],
    });
    expect(result.text).toContain('with no summary yet');
    expect(result.text).toContain('Set OPENAI_API_KEY or OPENAI_BASE_URL to chat with a real model.');
  });

  it('calls a bound calculator for "calculate ..." and reports the tool result', async () => {
    const model = new OfflineChatModel();
    const asked = [message('user', 'Please calculate 2+2')];
    const call = await streamChat({ model, messages: asked, tools: [calculatorTool] });
    expect(call.finishReason).toBe('tool_calls');
    expect(call.toolCalls).toEqual([
      { id: expect.stringMatching(/^call_offline_/), name: 'calculator', args: { expression: '2+2' } },
    ]);
    const answered = await streamChat({
      model,
      tools: [calculatorTool],
      messages: [
        ...asked,
        message('assistant', '', { toolCalls: call.toolCalls }),
        message('tool', '4', { toolCallId: call.toolCalls[0]!.id }),
      ],
    });
    expect(answered.text).toBe('[offline model] calculator returned: 4');
  });

  it('calls a bound save_memory for "remember that ..." with the fact as one sentence, and reports the result', async () => {
    const model = new OfflineChatModel();
    const asked = [message('user', 'Hi! Please remember that I prefer aisle seats. What is next?')];
    const call = await streamChat({ model, messages: asked, tools: [calculatorTool, saveMemoryTool] });
    expect(call.finishReason).toBe('tool_calls');
    expect(call.toolCalls).toEqual([
      { id: expect.stringMatching(/^call_offline_/), name: 'save_memory', args: { text: 'I prefer aisle seats.' } },
    ]);
    const answered = await streamChat({
      model,
      tools: [saveMemoryTool],
      messages: [
        ...asked,
        message('assistant', '', { toolCalls: call.toolCalls }),
        message('tool', 'Saved to the user\'s memories: "I prefer aisle seats."', {
          toolCallId: call.toolCalls[0]!.id,
        }),
      ],
    });
    expect(answered.text).toBe(
      '[offline model] save_memory returned: Saved to the user\'s memories: "I prefer aisle seats."',
    );
  });

  it('reads the fact of each way of asking to remember, and no question or mention of remembering', () => {
    expect(rememberRequest('remember that my passport expires in 2027')).toBe('My passport expires in 2027.');
    expect(rememberRequest('Please remember: the gate code is 4455!')).toBe('The gate code is 4455!');
    expect(rememberRequest("Don't forget that we land at 10:40.")).toBe('We land at 10:40.');
    expect(rememberRequest('Remember I am vegetarian')).toBe('I am vegetarian.');
    for (const other of [
      'Do you remember that I prefer aisle seats?',
      'Remember when we went to Porto?',
      'I remember that trip well.',
      'remember',
      'What should I remember about Lisbon?',
      'Remember to call Ana tomorrow.',
    ])
      expect(rememberRequest(other), other).toBeUndefined();
  });

  it('restates a request to remember when no save_memory tool is bound', async () => {
    const result = await streamChat({
      model: new OfflineChatModel(),
      messages: [message('user', 'Remember that I prefer aisle seats.')],
      tools: [calculatorTool],
    });
    expect(result.toolCalls).toEqual([]);
    expect(result.text).toContain('You said: "Remember that I prefer aisle seats."');
  });

  it('never calls a tool without a bound calculator', async () => {
    const result = await streamChat({ model: new OfflineChatModel(), messages: [message('user', 'calculate 2+2')] });
    expect(result.toolCalls).toEqual([]);
  });

  it('honours an abort signal between chunks', async () => {
    const controller = new AbortController();
    const model = new OfflineChatModel({ chunkDelayMs: 5 });
    const deltas: string[] = [];
    const error = await streamChat({
      model,
      messages: [message('user', 'hello')],
      signal: controller.signal,
      onDelta: (text) => {
        deltas.push(text);
        if (deltas.length === 3) controller.abort();
      },
    }).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ kind: 'aborted' });
    expect(deltas).toHaveLength(3);
  });

  it('works through invoke too', async () => {
    const answer = await new OfflineChatModel().invoke([new HumanMessage('ping')]);
    expect(answer.text).toContain('You said: "ping"');
    expect(answer.usage_metadata?.output_tokens).toBeGreaterThan(0);
  });
});

describe('OfflineChatModel, chat mode, asked about something said earlier', () => {
  const at = new Date('2026-05-02T10:00:00Z');
  /** The recall slot exactly as the pack builder renders it. */
  const recallSlot = (recalled: RecalledMessage[]): PackMessage =>
    buildRecallSlot({
      recalled,
      excludeSeqs: new Set(),
      tokens: 1500,
      measure: (entry) => Math.ceil(entry.content.length / 4) + 3,
    })!.message;
  const summary = message(
    'system',
    'You are helpful.\n\n## Summary of the conversation so far (through message #8)\n- user: plans a trip, hotel HOTEL-77.',
  );
  const ask = (question: string, before: PackMessage[]) =>
    streamChat({ model: new OfflineChatModel(), messages: [...before, message('user', question, { seq: 20 })] });

  it('quotes the recalled message that answers the question, with its seq', async () => {
    const slot = recallSlot([
      { seq: 3, role: 'user', content: 'Our budget for the trip is 2400 EUR, flights included.', createdAt: at },
      {
        seq: 4,
        role: 'assistant',
        content: '[offline model] You said: "Our budget for the trip is 2400 EUR".',
        createdAt: at,
      },
      { seq: 7, role: 'user', content: 'What budget did we settle on?', createdAt: at },
    ]);
    const window = [
      message('user', 'Book the museum tickets.', { seq: 18 }),
      message('assistant', '[offline model] You said: "Book the museum tickets."', { seq: 19 }),
    ];
    const result = await ask('What was my budget?', [summary, slot, ...window]);
    expect(result.text).toMatch(
      /^\[offline model\] \[#3\] \(you, recalled from earlier\) says: "Our budget for the trip is 2400 EUR, flights included\."/,
    );
    // The question itself is not restated, nor the summary's identifiers: the quote is the answer.
    expect(result.text).not.toContain('You said');
    expect(result.text).toContain('including a summary of earlier messages');
    expect(result.text.length).toBeLessThan(260);
  });

  it('quotes a window message with its seq, the latest statement winning, a multi-line recalled text read whole', async () => {
    const slot = recallSlot([
      {
        seq: 2,
        role: 'user',
        content: 'Notes for the trip:\nthe vault code is PLANT-8812\nand the door code 4455.',
        createdAt: at,
      },
    ]);
    const window = [
      message('user', 'The hotel is near Alfama.', { seq: 15 }),
      message('assistant', 'Noted: the hotel is near Alfama.', { seq: 16 }),
      message('user', 'Actually the hotel moved to Baixa.', { seq: 17 }),
      message('assistant', 'Noted.', { seq: 18 }),
    ];
    const hotel = await ask('Please remind me where the hotel is.', [summary, slot, ...window]);
    expect(hotel.text).toContain('[#17] (you, in my window) says: "Actually the hotel moved to Baixa."');
    const vault = await ask('What was the vault code I gave you?', [summary, slot, ...window]);
    expect(vault.text).toContain(
      '[#2] (you, recalled from earlier) says: "Notes for the trip: the vault code is PLANT-8812 and the door code 4455."',
    );
  });

  it('finds the slot where the pack puts it, right after the question (strict: joined to it, after its text), with other chats after', async () => {
    const window = [
      message('user', 'Book the museum tickets.', { seq: 18 }),
      message('assistant', 'Noted.', { seq: 19 }),
      message('user', 'What was my budget?', { seq: 20 }),
    ];
    const state = {
      contextStartSeq: 1,
      memoryMode: 'summary' as const,
      pinned: [],
      window: window.map((entry) => ({
        seq: entry.seq!,
        role: entry.role as 'user' | 'assistant',
        content: entry.content,
        tokens: 10,
      })),
      summary: { text: '- user: plans a trip, hotel HOTEL-77.', tokens: 12, coveredThroughSeq: 17, revision: 1 },
      recalled: [
        {
          seq: 3,
          role: 'user' as const,
          content: 'Our budget for the trip is 2400 EUR, flights included.',
          createdAt: at,
          score: 3,
        },
        {
          seq: 4,
          role: 'assistant' as const,
          content: '[offline model] You said: "Our budget for the trip is 2400 EUR, flights included.".',
          createdAt: at,
          score: 9,
        },
        {
          seq: 5,
          role: 'user' as const,
          content: 'The budget of the Porto trip was 900 EUR.',
          createdAt: at,
          score: 2,
          thread: { id: 'other-thread', title: 'Porto' },
        },
      ],
    };
    for (const compat of [undefined, 'strict'] as const) {
      const pack = buildContextPack({
        systemPrefix: 'You are helpful.',
        systemPrefixTokens: 8,
        budget: 10_000,
        recallTokens: 1500,
        state,
        ...(compat ? { compat } : {}),
      });
      const slot = pack.messages.findIndex((entry) => entry.content.includes(RECALL_HEADING));
      expect(pack.messages[slot]?.content).toContain(RECALL_ELSEWHERE_HEADING);
      // openai: the slot is its own user message right after the question; strict: it joins the question's turn, after its text.
      expect(slot).toBe(pack.messages.length - 1);
      if (!compat) expect(pack.messages[slot - 1]?.content).toBe(window.at(-1)?.content);
      const result = await streamChat({ model: new OfflineChatModel(), messages: pack.messages });
      expect(result.text).toMatch(
        /^\[offline model\] \[#3\] \(you, recalled from earlier\) says: "Our budget for the trip is 2400 EUR, flights included\."/,
      );
    }
    // A statement after the slot is the user's message, not the slot: restated as before.
    const pack = buildContextPack({
      systemPrefix: 'You are helpful.',
      systemPrefixTokens: 8,
      budget: 10_000,
      recallTokens: 1500,
      compat: 'strict',
      state: { ...state, window: [{ seq: 20, role: 'user' as const, content: 'Sintra is a maybe.', tokens: 10 }] },
    });
    expect((await streamChat({ model: new OfflineChatModel(), messages: pack.messages })).text).toContain(
      'You said: "Sintra is a maybe."',
    );
  });

  it('restates as before when the message is no question about the past, or nothing in the context answers it', async () => {
    const slot = recallSlot([{ seq: 3, role: 'user', content: 'Our budget for the trip is 2400 EUR.', createdAt: at }]);
    const statement = await ask('My budget grew a little.', [summary, slot]);
    expect(statement.text).toContain('You said: "My budget grew a little."');
    const unknown = await ask('What is the weather in Porto?', [summary, slot]);
    expect(unknown.text).toContain('You said: "What is the weather in Porto?"');
    expect(unknown.text).toContain('The summary keeps 1 point, the newest: "user: plans a trip, hotel HOTEL-77."');
    // Half of the question's words must match: one word of three is not an answer.
    const loose = await ask('Which trip photos and videos did you like?', [summary, slot]);
    expect(loose.text).toContain('You said:');
  });
});

describe('OfflineChatModel, summarizer mode', () => {
  const material = [
    'Previous summary:',
    '- user: My name is Alice Martin and I manage the Paris office.',
    '',
    'Messages to fold:',
    'user: I need to migrate invoice INV-2024-0042 to the new system. The weather is nice today.',
    'assistant: Sure. The config lives at /etc/billing/config.yaml and the endpoint is https://billing.example.com/v2/import. Happy to help.',
    'user: The budget is 12,500 EUR and the deadline is March 3rd. Thanks a lot.',
    'assistant: Noted, I will keep that in mind.',
  ].join('\n');

  it('keeps the sentences with names, numbers and identifiers, and the previous summary', async () => {
    const model = new OfflineChatModel({ mode: 'summarizer' });
    const summary = await streamChat({
      model,
      messages: [message('system', SUMMARY_INSTRUCTIONS), message('user', material)],
    });
    for (const identifier of [
      'Alice Martin',
      'INV-2024-0042',
      '/etc/billing/config.yaml',
      'https://billing.example.com/v2/import',
      '12,500 EUR',
      'March 3rd',
    ]) {
      expect(summary.text).toContain(identifier);
    }
    expect(summary.text).not.toContain('weather is nice');
    expect(summary.text).not.toContain('keep that in mind');
    expect(summary.text).not.toContain('120 tokens');
    // Bullets only, each a sentence of what someone wrote; the assistant's marked as such.
    expect(summary.text.split('\n').every((line) => line.startsWith('- '))).toBe(true);
    expect(summary.text).toContain('- I need to migrate invoice INV-2024-0042');
    expect(summary.text).toContain('- assistant: The config lives at /etc/billing/config.yaml');
  });

  it('stays within the token cap stated in the prompt, preferring identifier-dense sentences', async () => {
    const model = new OfflineChatModel({ mode: 'summarizer' });
    const long = Array.from(
      { length: 60 },
      (_, index) => `user: Ticket T-${1000 + index} was opened by Bob on day ${index}.`,
    ).join('\n');
    const summary = await streamChat({
      model,
      messages: [new SystemMessage(SUMMARY_INSTRUCTIONS), new HumanMessage(long)].map((entry) =>
        message(entry.type === 'system' ? 'system' : 'user', entry.text),
      ),
    });
    expect(countTextTokens(summary.text)).toBeLessThanOrEqual(120);
    expect(summary.text).toContain('T-1059'); // newest first when over the cap
    const kept = summary.text.split('\n').slice(1);
    expect(kept.length).toBeGreaterThan(3);
    expect(kept).toEqual([...kept].sort((a, b) => Number(/T-(\d+)/.exec(a)![1]) - Number(/T-(\d+)/.exec(b)![1])));
  });

  it('uses maxSummaryTokens when the prompt states no cap, labels separate messages, and dedupes re-fed lines', async () => {
    const model = new OfflineChatModel({ mode: 'summarizer', maxSummaryTokens: 60 });
    const summary = await streamChat({
      model,
      messages: [
        message('system', 'Summarize.'),
        message('system', 'Summary (offline model, extractive):\n- user: Deploy id is dep_77.'),
        message('user', 'Deploy id is dep_77.'),
        message('assistant', 'Rolled back to v1.4.2 at 14:05.'),
      ],
    });
    expect(countTextTokens(summary.text)).toBeLessThanOrEqual(60);
    expect(summary.text.match(/dep_77/g)).toHaveLength(1);
    expect(summary.text).toContain('- assistant: Rolled back to v1.4.2 at 14:05.');
  });

  it('keeps the first sentences when nothing carries an identifier', async () => {
    const model = new OfflineChatModel({ mode: 'summarizer' });
    const summary = await streamChat({
      model,
      messages: [message('system', 'Summarize.'), message('user', 'we talked about nothing much. it was fine.')],
    });
    expect(summary.text).toContain('we talked about nothing much.');
  });
});
