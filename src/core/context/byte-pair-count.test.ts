import cl100kBase from 'js-tiktoken/ranks/cl100k_base';
import o200kBase from 'js-tiktoken/ranks/o200k_base';
import { Tiktoken } from 'js-tiktoken/lite';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { bytePairTokenCount } from './byte-pair-count';

const encodings = {
  o200k_base: { encoder: new Tiktoken(o200kBase), pattern: o200kBase.pat_str },
  cl100k_base: { encoder: new Tiktoken(cl100kBase), pattern: cl100kBase.pat_str },
};
const utf8 = new TextEncoder();

/** Our count of a text: each pre-tokenizer piece merged by bytePairTokenCount. */
function countByPieces(encodingName: keyof typeof encodings, text: string): number {
  const { encoder, pattern } = encodings[encodingName];
  const ranks = (encoder as unknown as { rankMap: Map<string, number> }).rankMap;
  let tokens = 0;
  for (const [piece] of text.matchAll(new RegExp(pattern, 'ug'))) {
    tokens += bytePairTokenCount(utf8.encode(piece), (key) => ranks.get(key));
  }
  return tokens;
}

// Alphabets whose runs make long single pieces, mixed with the characters that split them.
const alphabet = fc.constantFrom(...'aAbBeEtTsS_ -.,!?\n0123456789中文字😀é\u0301ñßΩжحاלשกข'.split(''), '\ud800', '😀');

describe('bytePairTokenCount', () => {
  for (const encodingName of ['o200k_base', 'cl100k_base'] as const) {
    it(`makes as many tokens as js-tiktoken's encode (${encodingName}), for any text`, () => {
      const { encoder } = encodings[encodingName];
      fc.assert(
        fc.property(
          fc.array(alphabet, { maxLength: 300 }),
          fc.string({ maxLength: 80, unit: 'binary' }),
          (chars, tail) => {
            const text = chars.join('') + tail;
            expect(countByPieces(encodingName, text)).toBe(encoder.encode(text, [], []).length);
          },
        ),
        { numRuns: 300 },
      );
    });
  }

  it('counts prose, code and long single runs exactly as js-tiktoken does', () => {
    const { encoder } = encodings.o200k_base;
    const texts = [
      'The quick brown fox jumps over the lazy dog. '.repeat(20),
      'function bytePairTokenCount(bytes: Uint8Array): number { return bytes.length; }\n'.repeat(5),
      'a'.repeat(700),
      '_'.repeat(900),
      'ab'.repeat(400),
      '中'.repeat(300),
      'aB'.repeat(250),
      '😀'.repeat(200),
    ];
    for (const text of texts)
      expect(countByPieces('o200k_base', text), text.slice(0, 20)).toBe(encoder.encode(text, [], []).length);
  });

  it('counts nothing for no bytes and one token for one byte', () => {
    expect(bytePairTokenCount(new Uint8Array(0), () => 0)).toBe(0);
    expect(bytePairTokenCount(new Uint8Array([97]), () => 0)).toBe(1);
  });
});
