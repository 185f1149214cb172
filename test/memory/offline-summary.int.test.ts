import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ContextPackDto, MessageDto, SendMessageResponseDto, ThreadDto } from '../../src/shared/api';
import { startTestApp, type TestApp } from '../support/test-app';
import { waitFor } from '../support/wait-for';

/** Fifteen turns of planning an offsite, with planted facts (the offline model under its 2,048-token demo window). */
const PLANNING = [
  "Hi! I'm organising the team offsite for the Lisbon office this spring.",
  'The budget is 18,000 EUR for everything, travel excluded.',
  'Our venue shortlist is Quinta da Serra, Casa do Lago and Hotel Miramar.',
  'Can you suggest a few icebreaker activities?',
  'We will be 42 people in total, including the two new hires.',
  'We booked Sabores do Tejo as the caterer, with vegetarian options.',
  'What should the agenda look like on the first day?',
  'The dates are May 14 to May 16, arriving on Thursday morning.',
  'Maria Santos will run the design workshop on the second day.',
  'Please keep the evenings free for team dinners.',
  'How many rooms would we need if people share?',
  'We decided against Hotel Miramar because it has no meeting room.',
  'Transport is a chartered bus leaving the office at 8:30.',
  'Any ideas for a rainy afternoon?',
  'Thanks, that is all for today.',
];

/** What must survive the folds: the budget, the venue shortlist, the caterer. */
const PLANTED = ['18,000 EUR', 'Quinta da Serra', 'Sabores do Tejo'];

/** Fragments of the offline model's own answers that a summary must never hold. */
const BOOKKEEPING = [/\d+ tokens/, /My context/, /\[offline model\]/, /\d+ messages \(/];

function bullets(summary: string): string[] {
  return summary.split('\n').filter((line) => line.trim() !== '');
}

/** Every line a bullet holding a sentence of at least four words that one of `messages` contains. */
function expectReadable(summary: string, messages: readonly string[]): void {
  for (const line of bullets(summary)) {
    expect(line, line).toMatch(/^- /);
    const sentence = line
      .slice(2)
      .replace(/\s*\[#\d+\]$/, '')
      .trim();
    expect(sentence.split(/\s+/).length, line).toBeGreaterThanOrEqual(4);
    expect(
      messages.some((message) => message.includes(sentence)),
      `"${sentence}" is drawn from a message`,
    ).toBe(true);
    for (const pattern of BOOKKEEPING) expect(line, line).not.toMatch(pattern);
  }
}

describe('the offline summary after a planning chat', () => {
  let app: TestApp;
  let token: string;
  let thread: ThreadDto;

  beforeAll(async () => {
    app = await startTestApp();
    ({ token } = await app.guest());
    thread = (await (await app.api('/api/threads', { method: 'POST', token, json: {} })).json()) as ThreadDto;
  });
  afterAll(async () => {
    await app?.stop();
  });

  const detail = async () =>
    (await (await app.api(`/api/threads/${thread.id}`, { token })).json()) as {
      memoryRebuilding: boolean;
      context: { foldPending: boolean; revision: number };
    };
  const context = async () =>
    (await (await app.api(`/api/threads/${thread.id}/context`, { token })).json()) as ContextPackDto;
  const transcript = async () =>
    ((await (await app.api(`/api/threads/${thread.id}/messages`, { token })).json()) as { messages: MessageDto[] })
      .messages;

  it('holds readable sentences with the planted facts after two folds, and the answers name real points', async () => {
    const revisions = new Set<number>();
    let lastReply = '';
    for (const content of PLANNING) {
      const response = await app.api(`/api/threads/${thread.id}/messages`, {
        method: 'POST',
        token,
        json: { content },
      });
      expect(response.status).toBe(201);
      lastReply = ((await response.json()) as SendMessageResponseDto).messages.at(-1)?.content ?? '';
      await waitFor(async () => !(await detail()).context.foldPending, { timeoutMs: 30_000, what: 'the fold' });
      revisions.add((await detail()).context.revision);
    }
    const summary = (await context()).summary;
    process.stdout.write(`offline summary after ${PLANNING.length} turns:\n${summary?.text}\n`);
    expect(Math.max(...revisions), 'folds').toBeGreaterThanOrEqual(2);
    expectReadable(summary?.text ?? '', PLANNING);
    for (const fact of PLANTED) expect(summary?.text).toContain(fact);
    // The answer names the summary's newest point, not fragments.
    expect(lastReply).toMatch(/The summary keeps \d+ points?, the newest: "[^"]{12,}"/);
    for (const pattern of BOOKKEEPING.slice(0, 2)) expect(lastReply.split('The summary keeps')[1]).not.toMatch(pattern);
  }, 180_000);

  it('rebuilds after a delete keeping the points of the messages that remain', async () => {
    const before = (await context()).summary?.text ?? '';
    const messages = await transcript();
    // Delete the icebreaker question: the facts stay.
    const deleted = messages.find((message) => message.content.startsWith('Can you suggest a few icebreaker'));
    expect(deleted).toBeDefined();
    const response = await app.api(`/api/threads/${thread.id}/messages/${deleted?.id}`, { method: 'DELETE', token });
    expect(response.status).toBeLessThan(300);
    // The summary covered it: it is withdrawn and rebuilt from the messages that remain.
    expect(((await response.json()) as { memoryRebuilding: boolean }).memoryRebuilding).toBe(true);
    await waitFor(async () => !(await detail()).memoryRebuilding, { timeoutMs: 30_000, what: 'the rebuild' });
    const rebuilt = (await context()).summary?.text ?? '';
    process.stdout.write(`rebuilt offline summary:\n${rebuilt}\n`);
    expectReadable(rebuilt, PLANNING);
    // Every point of the summary before the delete is still there (the deleted message held none).
    for (const line of bullets(before)) expect(rebuilt).toContain(line);
    for (const fact of PLANTED) expect(rebuilt).toContain(fact);
    expect(rebuilt).not.toContain('icebreaker');
  }, 60_000);
});
