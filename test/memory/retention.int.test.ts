import { describe, expect, it } from 'vitest';
import { wireContentText } from '../../src/llm/count-chat-tokens';
import type { SummaryRevisionListDto } from '../../src/shared/admin-api';
import { replyWithText, type StubRequest } from '../support/openai-stub';
import { classifyRequest } from '../support/summary-stub';
import { useChatServer } from '../support/chat-server';
import { memoryKit } from './memory-test-kit';

const ADMIN_TOKEN = 'test-admin-token-0123456789';
type Mode = 'restores-when-asked' | 'never-keeps' | 'cap-drops-them';

const lastText = (request: StubRequest) => wireContentText(request.body.messages.at(-1)?.content ?? '');
const isReask = (request: StubRequest) => lastText(request).startsWith('This summary leaves out identifiers');
// A summary over the cap is consolidated (the segments rewritten into one).
const isCondense = (request: StubRequest) => lastText(request).startsWith('Consolidate this summary');

describe('the retention figure of a fold, measured on the text committed, through the re-ask path', () => {
  let mode: Mode = 'restores-when-asked';

  const server = useChatServer({
    stub: {
      classifyRequest,
      responder: (request) => {
        if (request.kind !== 'summary') return replyWithText('ok');
        // The first answer always drops the identifiers; what happens when re-asked depends on the summarizer.
        if (isCondense(request)) return replyWithText('Intent: keeping notes.');
        if (!isReask(request) || mode === 'never-keeps') return replyWithText('Intent: keeping notes.');
        const padding =
          mode === 'cap-drops-them' ? ` ${'The notes go on about the warehouse and the schedule. '.repeat(30)}` : '';
        return replyWithText(`Intent: keeping notes on CODE-501 and CODE-502.${padding}`);
      },
    },
    env: { SUMMARY_TRIGGER: 'messages=4', SUMMARY_KEEP: 'messages=2', SUMMARY_MAX_TOKENS: '80' },
  });
  const kit = memoryKit(server);

  /** Two turns on a new thread: the fold takes the first (its user message holds the two identifiers). */
  async function foldWith(next: Mode) {
    mode = next;
    server.stub.reset();
    const thread = await kit.createThread();
    await kit.send(thread.id, 'note CODE-501 and CODE-502 for later');
    await kit.send(thread.id, 'thanks');
    await kit.waitForFoldThrough(thread.id, 2);
    const revisions = (await (
      await server.app.api(`/api/admin/threads/${thread.id}/summaries`, { token: ADMIN_TOKEN })
    ).json()) as SummaryRevisionListDto;
    const summary = (await kit.context(thread.id)).summary;
    const summaryRequests = server.stub.requests.filter((request) => request.kind === 'summary');
    return {
      revision: revisions.revisions.at(-1)!,
      summary,
      reasks: summaryRequests.filter(isReask).length,
      condenses: summaryRequests.filter(isCondense).length,
    };
  }

  it('re-asks once when the first answer drops identifiers, and commits the answer that keeps them', async () => {
    const { revision, summary, reasks } = await foldWith('restores-when-asked');
    expect(reasks).toBe(1);
    expect(summary?.text).toContain('CODE-501');
    expect(revision).toMatchObject({ identifiersKept: 2, identifiersTotal: 2 });
  });

  it('commits the fold anyway when the summarizer never keeps them, and the figure says so', async () => {
    const { revision, summary, reasks } = await foldWith('never-keeps');
    expect(reasks).toBe(1);
    expect(summary?.text).toBe('Intent: keeping notes.');
    expect(revision).toMatchObject({ identifiersKept: 0, identifiersTotal: 2 });
  });

  it('counts what the committed text keeps, not what the re-asked answer had before the cap condensed it', async () => {
    const { revision, summary, reasks, condenses } = await foldWith('cap-drops-them');
    expect(reasks).toBe(1);
    expect(condenses).toBe(1);
    expect(summary?.text).not.toContain('CODE-501');
    expect(revision).toMatchObject({ identifiersKept: 0, identifiersTotal: 2 });
  });
});
