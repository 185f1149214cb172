import { describe, expect, it } from 'vitest';
import { useChatServer } from '../support/chat-server';
import { replyWithText } from '../support/openai-stub';
import { classifyRequest } from '../support/summary-stub';
import { memoryKit, query, leadingText } from './memory-test-kit';

describe('summary citations', () => {
  const server = useChatServer({
    // A summarizer that cites inside and outside the folded range (#1–#4 for the first fold).
    stub: {
      classifyRequest,
      responder: (request) =>
        replyWithText(
          request.kind === 'summary'
            ? 'Intent: plan the trip [#1]. Budget agreed [#2–9]. Hotel booked [#57]. Visa [#0, #3].'
            : 'noted',
        ),
    },
    env: { SUMMARY_TRIGGER: 'messages=6', SUMMARY_KEEP: 'messages=2' },
  });

  it('removes citations outside the range the new summary covers before commit', async () => {
    const kit = memoryKit(server);
    const thread = await kit.createThread();
    for (let turn = 1; turn <= 3; turn += 1) await kit.send(thread.id, `Trip planning, turn ${turn}.`);
    await kit.waitForFoldThrough(thread.id, 2);
    const [first] = await query<{ text: string; from_seq: number; through_seq: number }>(
      server.app,
      'SELECT text, from_seq, through_seq FROM summary_revisions WHERE thread_id = $1 ORDER BY revision LIMIT 1',
      [thread.id],
    );
    expect(first?.from_seq).toBe(1);
    const through = first?.through_seq ?? 0;
    expect(through).toBeLessThan(9);
    expect(first?.text).toBe(`Intent: plan the trip [#1]. Budget agreed [#2–${through}]. Hotel booked. Visa [#3].`);
    expect(leadingText(await kit.context(thread.id))).not.toContain('#57');
  });
});
