import { describe, expect, it } from 'vitest';
import { recallEarnsItsTokens, recallTerms } from './recall-gate';

const window = [
  'We are planning the garden: tomatoes along the fence, herbs by the kitchen door.',
  'Tomatoes need six hours of sun; the fence side gets it in the afternoon.',
  'Then the herbs go by the door and the tomatoes along the fence.',
];

describe('recallEarnsItsTokens', () => {
  it('passes a short question, however it is worded', () => {
    expect(
      recallEarnsItsTokens({
        query: 'What was my passport number again?',
        held: window,
        candidates: ['My passport is C4R55T901.'],
      }),
    ).toBe(true);
    expect(
      recallEarnsItsTokens({
        query: 'When did Caroline go to the support group?',
        held: window,
        candidates: ['I went to a support group yesterday.'],
      }),
    ).toBe(true);
    expect(
      recallEarnsItsTokens({
        query: 'Tell me the name of the boat again.',
        held: window,
        candidates: ['The boat is called Ariel.'],
      }),
    ).toBe(true);
    expect(
      recallEarnsItsTokens({
        query: 'Remind me of the vault code',
        held: window,
        candidates: ['The vault code is 1234.'],
      }),
    ).toBe(true);
  });

  it('passes a message an older one covers clearly better than the window does', () => {
    expect(
      recallEarnsItsTokens({
        query: 'I renewed the passport at the consulate in Lyon today, the clerk kept the old one.',
        held: window,
        candidates: [
          'Remember the consulate in Lyon wants the old passport when you renew it.',
          'The fence needs paint.',
        ],
      }),
    ).toBe(true);
  });

  it('refuses a message that continues what the window already says', () => {
    expect(
      recallEarnsItsTokens({
        query: 'Great, so tomatoes along the fence where the afternoon sun is, and the herbs next to the kitchen door.',
        held: window,
        candidates: ['Last spring the tomatoes along the fence did well.', 'Herbs are easy.'],
      }),
    ).toBe(false);
  });

  it('refuses a long message nothing older covers well, and anything without candidates', () => {
    expect(
      recallEarnsItsTokens({
        query:
          'My sister visited yesterday and we talked for hours about her new job in the city and the apartment she found.',
        held: window,
        candidates: ['The weather was nice.', 'I bought a new bike.'],
      }),
    ).toBe(false);
    expect(recallEarnsItsTokens({ query: 'What was my passport number?', held: window, candidates: [] })).toBe(false);
  });

  it('weighs terms by how rare they are, so words every message shares count little', () => {
    const held = [
      'Caroline: the painting is done.',
      'Caroline: the class starts Monday.',
      'Caroline: the trip was fun.',
    ];
    // "Caroline" is in every message: covering it alone is not covering the message.
    expect(
      recallEarnsItsTokens({
        query: 'Caroline: the pottery workshop was wonderful, my bowl cracked in the kiln though.',
        held,
        candidates: ['Caroline: I love the beach.'],
      }),
    ).toBe(false);
  });
});

describe('recallTerms', () => {
  it('keeps content words, cut to six characters, without stop words', () => {
    expect([...recallTerms('The passports were RENEWED in Lyon, 2024!')]).toEqual(['passpo', 'renewe', 'lyon', '2024']);
  });
});
