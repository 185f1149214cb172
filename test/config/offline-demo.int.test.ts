import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SavedMemoryListDto, SendMessageResponseDto, ServerInfoDto, ThreadDto } from '../../src/shared/api';
import { startTestApp, type TestApp } from '../support/test-app';
import { waitFor } from '../support/wait-for';

/** What a newcomer types in a first chat with no model configured. */
const NEWCOMER_MESSAGES = [
  'Hi! I am planning a trip to Lisbon in May.',
  'My budget is 2400 EUR for the whole week.',
  'I would like a hotel near Alfama, booking reference BK-5521.',
  'Can you suggest three things to do on the first day?',
  'My flight is TP-1347, landing at 10:40.',
  'What about a day trip to Sintra?',
  'I prefer walking tours over bus tours.',
  'Please remind me what my budget was.',
  'Is the tram 28 worth it?',
  'Thanks! What should I pack for May weather?',
  'One more: where should I eat on the last evening?',
  'Summarize my plan so far, please.',
];

describe('the offline model on a first visit', () => {
  let app: TestApp;
  let token: string;

  beforeAll(async () => {
    // No endpoint and no window: the built-in offline model under its demo window.
    app = await startTestApp();
    ({ token } = await app.guest());
  });
  afterAll(async () => {
    await app?.stop();
  });

  it('says it runs a small demo window', async () => {
    const info = (await (await app.api('/api/info')).json()) as ServerInfoDto;
    expect(info).toMatchObject({ offline: true, demoWindow: true, contextWindow: 2048 });
  });

  it('shows the summary forming within about ten turns, with short replies', async () => {
    const thread = (await (await app.api('/api/threads', { method: 'POST', token, json: {} })).json()) as ThreadDto;
    let foldedAfter: number | null = null;
    for (const [index, content] of NEWCOMER_MESSAGES.entries()) {
      const response = await app.api(`/api/threads/${thread.id}/messages`, {
        method: 'POST',
        token,
        json: { content },
      });
      expect(response.status).toBe(201);
      const reply = ((await response.json()) as SendMessageResponseDto).messages.at(-1)?.content ?? '';
      expect(reply).toContain('[offline model]');
      // A reply restates the message and the context in a few lines, not a list of every identifier seen.
      expect(reply.length).toBeLessThan(content.length + 260);
      // Asked about the budget said earlier, it quotes that message with its seq (from its window or from recall).
      if (content.includes('remind me what my budget was')) {
        expect(reply).toMatch(
          /^\[offline model\] \[#3\] \(you, (?:in my window|recalled from earlier)\) says: "My budget is 2400 EUR for the whole week\."/,
        );
      }
      // Folds run in the background: give the one a turn may have started time to land before the next turn.
      await waitFor(
        async () => {
          const detail = (await (await app.api(`/api/threads/${thread.id}`, { token })).json()) as {
            context: { foldPending: boolean; revision: number };
          };
          if (detail.context.revision > 0 && foldedAfter === null) foldedAfter = index + 1;
          return !detail.context.foldPending;
        },
        { timeoutMs: 30_000, what: 'the fold of this turn' },
      );
    }
    // The trigger (768 tokens of the 2,048 demo window) is reached at turn 11 (792 tokens) and the offline model's
    // replies are deterministic. (Turn 12 was seen when the fold committed while GET /api/threads/:id read the thread
    // and then its window: the folded window came with the previous summary, revision 0 and no fold pending.)
    expect(foldedAfter, 'turns before the first summary').toBe(11);
  }, 120_000);

  it('honours "remember that ...": the saved-memories view shows the fact, and the answer says it was saved', async () => {
    const { token: own } = await app.guest();
    const thread = (await (
      await app.api('/api/threads', { method: 'POST', token: own, json: {} })
    ).json()) as ThreadDto;
    const response = await app.api(`/api/threads/${thread.id}/messages`, {
      method: 'POST',
      token: own,
      json: { content: 'Please remember that I prefer aisle seats.' },
    });
    expect(response.status).toBe(201);
    const { messages } = (await response.json()) as SendMessageResponseDto;
    expect(messages.some((message) => message.toolCalls?.some((call) => call.name === 'save_memory'))).toBe(true);
    expect(messages.at(-1)?.content).toMatch(/^\[offline model\] save_memory returned: .*I prefer aisle seats\./);
    const { items } = (await (await app.api('/api/memory', { token: own })).json()) as SavedMemoryListDto;
    expect(items.map((item) => item.text)).toEqual(['I prefer aisle seats.']);
    expect(items[0]?.source).toMatchObject({ threadId: thread.id, seq: 1 });
  });

  it("reads the thread detail's summary and window from one snapshot, even with a fold committing meanwhile", async () => {
    const thread = (await (await app.api('/api/threads', { method: 'POST', token, json: {} })).json()) as ThreadDto;
    expect(
      (
        await app.api(`/api/threads/${thread.id}/messages`, {
          method: 'POST',
          token,
          json: { content: 'My budget is 2400 EUR.' },
        })
      ).status,
    ).toBe(201);
    // A fold commits right after the ownership check read the thread (the moment the old route read its window).
    const threads = app.application.deps.threads;
    const findThread = threads.findThread.bind(threads);
    threads.findThread = async (...args) => {
      const found = await findThread(...args);
      await app.application.db.$transaction([
        app.application.db
          .$executeRaw`UPDATE threads SET summary_text = 'Summary: a budget of 2400 EUR [#1].', summary_tokens = 12, summary_revision = 1,
          summary_covered_through_seq = 2, version = version + 1 WHERE id = ${thread.id}::uuid`,
        app.application.db.$executeRaw`DELETE FROM context_entries WHERE thread_id = ${thread.id}::uuid AND seq <= 2`,
      ]);
      return found;
    };
    try {
      const detail = (await (await app.api(`/api/threads/${thread.id}`, { token })).json()) as {
        context: { revision: number; summaryTokens: number; coveredThroughSeq: number; windowEntries: number };
      };
      expect(detail.context).toMatchObject({ revision: 1, coveredThroughSeq: 2, windowEntries: 0 });
      expect(detail.context.summaryTokens).toBeGreaterThan(0);
    } finally {
      threads.findThread = findThread;
    }
  });
});
