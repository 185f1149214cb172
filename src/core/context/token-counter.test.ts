import cl100kBase from 'js-tiktoken/ranks/cl100k_base';
import o200kBase from 'js-tiktoken/ranks/o200k_base';
import { Tiktoken } from 'js-tiktoken/lite';
import { describe, expect, it } from 'vitest';
import {
  createTokenCounter,
  tokenizerWork,
  MAX_ENCODED_PIECE_CHARS,
  type CountableMessage,
  type ToolDefinition,
} from './token-counter';

// The OpenAI cookbook "How to count tokens with tiktoken" example and the prompt tokens the API reported for it.
const COOKBOOK_MESSAGES: CountableMessage[] = [
  {
    role: 'system',
    content: 'You are a helpful, pattern-following assistant that translates corporate jargon into plain English.',
  },
  { role: 'system', name: 'example_user', content: 'New synergies will help drive top-line growth.' },
  { role: 'system', name: 'example_assistant', content: 'Things working well together will increase revenue.' },
  {
    role: 'system',
    name: 'example_user',
    content: "Let's circle back when we have more time to touch base on opportunities for increased leverage.",
  },
  {
    role: 'system',
    name: 'example_assistant',
    content: "Let's talk later when we're less busy about how to do better.",
  },
  { role: 'user', content: "This late pivot means we don't have time to boil the ocean for the client deliverable." },
];
const COOKBOOK_TOOLS: ToolDefinition[] = [
  {
    type: 'function',
    function: {
      name: 'get_current_weather',
      description: 'Get the current weather in a given location',
      parameters: {
        properties: {
          location: { type: 'string', description: 'The city and state, e.g. San Francisco, CA' },
          unit: { type: 'string', description: 'The unit of temperature to return', enum: ['celsius', 'fahrenheit'] },
        },
      },
    },
  },
];
const WEATHER_MESSAGES: CountableMessage[] = [
  { role: 'system', content: 'You are a helpful assistant that can answer to questions about the weather.' },
  { role: 'user', content: "What's the weather like in San Francisco?" },
];

const o200k = createTokenCounter('o200k_base');
const cl100k = createTokenCounter('cl100k_base');

function within2Percent(estimate: number, reported: number): boolean {
  return Math.abs(estimate - reported) <= 0.02 * reported;
}

describe('createTokenCounter', () => {
  it('counts simple strings like tiktoken', () => {
    expect(o200k.countText('hello world')).toBe(2);
    expect(cl100k.countText('hello world')).toBe(2);
    expect(o200k.countText('You are a helpful assistant.')).toBe(6);
    expect(o200k.countText('')).toBe(0);
  });

  it('matches the prompt tokens OpenAI reported for the cookbook conversation (gpt-3.5/gpt-4: 129, gpt-4o: 124)', () => {
    expect(cl100k.countPack(COOKBOOK_MESSAGES)).toBe(129);
    expect(o200k.countPack(COOKBOOK_MESSAGES)).toBe(124);
    expect(within2Percent(cl100k.countPack(COOKBOOK_MESSAGES), 129)).toBe(true);
  });

  it('matches the cookbook tool-schema figures (gpt-3.5/gpt-4: 105, gpt-4o: 101)', () => {
    expect(cl100k.countPack(WEATHER_MESSAGES) + cl100k.countToolSchemas(COOKBOOK_TOOLS)).toBe(105);
    expect(o200k.countPack(WEATHER_MESSAGES) + o200k.countToolSchemas(COOKBOOK_TOOLS)).toBe(101);
    // The bare function form counts the same as OpenAI's wrapper.
    const bare = COOKBOOK_TOOLS.map((tool) => ('function' in tool ? tool.function : tool));
    expect(o200k.countToolSchemas(bare)).toBe(o200k.countToolSchemas(COOKBOOK_TOOLS));
    expect(o200k.countToolSchemas([])).toBe(0);
  });

  it('charges 3 tokens per message plus role and content, and 3 to prime the reply', () => {
    const message: CountableMessage = { role: 'user', content: 'hello world' };
    expect(o200k.countMessage(message)).toBe(3 + 1 + 2);
    expect(o200k.countPack([message])).toBe(3 + 1 + 2 + 3);
    expect(o200k.countPack([])).toBe(3);
    expect(o200k.countMessage({ ...message, name: 'ada' })).toBe(6 + 1 + o200k.countText('ada'));
  });

  it('counts tool call names and arguments', () => {
    const plain: CountableMessage = { role: 'assistant', content: '' };
    const withCall: CountableMessage = {
      ...plain,
      toolCalls: [{ id: 'call_1', name: 'get_weather', args: { city: 'Paris' } }],
    };
    const expected =
      o200k.countMessage(plain) + 3 + o200k.countText('get_weather') + o200k.countText('{"city":"Paris"}');
    expect(o200k.countMessage(withCall)).toBe(expected);
    const twoCalls: CountableMessage = {
      ...plain,
      toolCalls: [...(withCall.toolCalls ?? []), { id: 'call_2', name: 'get_weather', args: { city: 'Rome' } }],
    };
    expect(o200k.countMessage(twoCalls)).toBeGreaterThan(o200k.countMessage(withCall));
  });

  it('counts special-token text as plain text instead of throwing', () => {
    expect(o200k.countText('<|endoftext|>')).toBe(7);
    expect(cl100k.countText('<|endoftext|>')).toBe(7);
  });

  it('differs by encoding where the vocabularies differ', () => {
    const text = 'Привет, как дела? これはテストです。';
    expect(o200k.countText(text)).toBeLessThan(cl100k.countText(text));
    expect(createTokenCounter('o200k_base').countText(text)).toBe(o200k.countText(text));
  });

  it('gives the same count for a long text measured again, also after many other texts were measured', () => {
    const counter = createTokenCounter('o200k_base');
    const summary = 'The user plans a trip to Lisbon in May and asked about CODE-42 twice. '.repeat(40);
    const first = counter.countText(summary);
    expect(counter.countText(summary)).toBe(first);
    for (let index = 0; index < 300; index += 1) counter.countText(`${index} ${summary}`);
    expect(counter.countText(summary)).toBe(first);
    expect(counter.countText(`${summary}!`)).toBe(createTokenCounter('o200k_base').countText(`${summary}!`));
  });

  it('encodes a repeated pack and tool schemas no more: each piece of text once per encoding, whichever counter measures it', () => {
    // What reached the byte-pair encoder (js-tiktoken's vocabulary through our merge), counted where it is entered.
    const from = tokenizerWork.encoderCalls;
    const encoderCalls = () => tokenizerWork.encoderCalls - from;
    const unique = `${Math.random()}`;
    const pack: CountableMessage[] = [
      {
        role: 'system',
        content: `You are a careful assistant (${unique}). Summary of earlier turns: the user plans a trip.`,
      },
      { role: 'user', content: `Which train do I take? ${unique}` },
      { role: 'assistant', content: `The 9:05 from Santa Apolónia. ${unique}` },
    ];
    const tools: ToolDefinition[] = [
      {
        name: `lookup_${unique.slice(2)}`,
        description: 'Looks a timetable up.',
        parameters: { properties: { station: { type: 'string', description: 'Where from' } } },
      },
    ];
    const counter = createTokenCounter('o200k_base');
    const first = counter.countPack(pack) + counter.countToolSchemas(tools);
    const encodedFirst = encoderCalls();
    expect(encodedFirst).toBeGreaterThan(0);
    // Each distinct piece of the pre-tokenizer's split is encoded at most once (a text's count is its pieces' sum).
    const texts = [
      ...pack.flatMap((message) => [message.role, message.content]),
      `lookup_${unique.slice(2)}:Looks a timetable up`,
      'station:string:Where from',
    ];
    const pieces = new Set(
      texts.flatMap((text) => [...text.matchAll(new RegExp(o200kBase.pat_str, 'ug'))].map((match) => match[0])),
    );
    expect(encodedFirst).toBeLessThanOrEqual(pieces.size);
    expect(createTokenCounter('o200k_base').countPack(pack) + counter.countToolSchemas(tools)).toBe(first);
    expect(counter.countPack(pack) + counter.countToolSchemas(tools)).toBe(first);
    expect(encoderCalls()).toBe(encodedFirst);
    // The other encoding counts the same texts with its own vocabulary.
    createTokenCounter('cl100k_base').countPack(pack);
    expect(encoderCalls()).toBeGreaterThan(encodedFirst);
  });
});

describe('counting hostile text in bounded time', () => {
  const exact = new Tiktoken(o200kBase);
  // The shapes a client can send that make one pre-tokenizer piece of the whole text (js-tiktoken's merge is
  // quadratic in a piece's length: 32,000 letters took 96 s whole), and mixed ones for comparison.
  const shapes: Record<string, (length: number) => string> = {
    letters: (length) => 'a'.repeat(length),
    underscores: (length) => '_'.repeat(length),
    punctuation: (length) => '!?'.repeat(length / 2),
    spaces: (length) => ' '.repeat(length),
    newlines: (length) => '\n'.repeat(length),
    'CJK ideographs': (length) => '中'.repeat(length),
    'emoji (surrogate pairs)': (length) => '😀'.repeat(length / 2),
    'combining marks': (length) => `a${'\u0301'.repeat(length - 1)}`,
    'lone surrogates': (length) => '\ud800a'.repeat(length / 2),
    'mixed case letters': (length) => 'aB'.repeat(length / 2),
  };

  for (const [shape, make] of Object.entries(shapes)) {
    it(`hands the encoder no input over ${MAX_ENCODED_PIECE_CHARS} characters for 32,000 characters of ${shape}`, () => {
      const counter = createTokenCounter('o200k_base');
      const text = make(32_000);
      const before = { ...tokenizerWork };
      const tokens = counter.countText(`${text} ${Math.random()}`);
      const calls = tokenizerWork.encoderCalls - before.encoderCalls;
      const chars = tokenizerWork.encoderChars - before.encoderChars;
      expect(tokens).toBeGreaterThan(0);
      expect(tokenizerWork.longestEncoderInput).toBeLessThanOrEqual(MAX_ENCODED_PIECE_CHARS);
      // Linear work: each character reaches the encoder at most once (the random tail adds a few pieces).
      expect(chars).toBeLessThanOrEqual(text.length + 64);
      expect(calls).toBeLessThanOrEqual(Math.ceil(text.length / (MAX_ENCODED_PIECE_CHARS - 1)) + 64);
    });
  }

  it('never counts fewer tokens than tiktoken for long runs (chunking may only over-count)', () => {
    const counter = createTokenCounter('o200k_base');
    for (const [shape, make] of Object.entries(shapes)) {
      for (const length of [300, 520]) {
        const text = make(length);
        expect(counter.countText(text), `${shape} × ${length}`).toBeGreaterThanOrEqual(
          exact.encode(text, [], []).length,
        );
      }
    }
    // Runs of real words with no spaces: a long identifier, a long URL-safe token.
    const identifier = Array.from({ length: 120 }, (_, index) => `segment${index}Name`).join('_');
    expect(counter.countText(identifier)).toBeGreaterThanOrEqual(exact.encode(identifier, [], []).length);
  });

  it("counts a long run's chunks with each encoding's own vocabulary, whichever encoding counted it first", () => {
    const cl100k = new Tiktoken(cl100kBase);
    const run = 'ab'.repeat(300);
    createTokenCounter('o200k_base').countText(run);
    const chunks = [run.slice(0, 256), run.slice(256, 512), run.slice(512)];
    expect(createTokenCounter('cl100k_base').countText(run)).toBe(
      chunks.reduce((sum, chunk) => sum + cl100k.encode(chunk, [], []).length, 0),
    );
  });

  it('counts text of ordinary pieces exactly as tiktoken does', () => {
    const counter = createTokenCounter('o200k_base');
    const prose = 'The quick brown fox jumps over the lazy dog; naïve café, 12345 → résumé. '.repeat(400);
    expect(counter.countText(prose)).toBe(exact.encode(prose, [], []).length);
  });

  it('counts random Unicode (short pieces of every script, lone surrogates, controls) exactly as tiktoken does, in both encodings', () => {
    const cl100k = new Tiktoken(cl100kBase);
    let seed = 7;
    const random = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      return seed / 2_147_483_648;
    };
    const ranges = [
      [0x20, 0x7f],
      [0x300, 0x370],
      [0x590, 0x690],
      [0x4e00, 0x9fff],
      [0xd800, 0xe000],
      [0x1, 0x20],
    ] as const;
    for (let sample = 0; sample < 20; sample += 1) {
      let text = '';
      while (text.length < 2000) {
        const [from, to] = ranges[Math.floor(random() * ranges.length)]!;
        text += String.fromCharCode(from + Math.floor(random() * (to - from)));
      }
      expect(createTokenCounter('o200k_base').countText(text)).toBe(exact.encode(text, [], []).length);
      expect(createTokenCounter('cl100k_base').countText(text)).toBe(cl100k.encode(text, [], []).length);
    }
  });
});
