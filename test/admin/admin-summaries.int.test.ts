import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type {
  AdminThreadDetailDto,
  AuditPageDto,
  SummaryRevisionDto,
  SummaryRevisionListDto,
} from '../../src/shared/admin-api';
import type { ThreadDto } from '../../src/shared/api';
import type { ThreadEvent } from '../../src/shared/events';
import { wireContentText } from '../../src/llm/count-chat-tokens';
import { startOpenAIStub, type OpenAIStub, type StubRequest } from '../support/openai-stub';
import { classifyRequest, summaryResponder } from '../support/summary-stub';
import { startTestApp, type TestApp } from '../support/test-app';
import { waitFor } from '../support/wait-for';

const ADMIN_TOKEN = 'test-admin-token-0123456789';

function requestText(request: StubRequest): string {
  return request.body.messages.map((message) => wireContentText(message.content)).join('\n');
}

describe('summary revisions through the admin API', () => {
  let stub: OpenAIStub;
  let app: TestApp;
  let token: string;
  let thread: ThreadDto;
  let turn = 0;

  async function sendTurns(count: number) {
    for (let index = 0; index < count; index += 1) {
      turn += 1;
      const response = await app.api(`/api/threads/${thread.id}/messages`, {
        method: 'POST',
        token,
        json: { content: `Turn ${turn}: remember CODE-${1000 + turn}.` },
      });
      expect(response.status).toBe(201);
    }
  }
  async function detail(): Promise<AdminThreadDetailDto> {
    return (await (
      await app.api(`/api/admin/threads/${thread.id}`, { token: ADMIN_TOKEN })
    ).json()) as AdminThreadDetailDto;
  }
  async function revisions(): Promise<SummaryRevisionDto[]> {
    const response = await app.api(`/api/admin/threads/${thread.id}/summaries`, { token: ADMIN_TOKEN });
    expect(response.status).toBe(200);
    return ((await response.json()) as SummaryRevisionListDto).revisions;
  }
  async function settled(minRevision: number) {
    await waitFor(
      async () => {
        const current = await detail();
        return !current.context.foldPending && current.context.revision >= minRevision;
      },
      { timeoutMs: 30_000, what: `folds to settle at revision ${minRevision} or later` },
    );
  }

  beforeAll(async () => {
    stub = await startOpenAIStub({ classifyRequest, responder: summaryResponder() });
    app = await startTestApp({
      env: {
        OPENAI_BASE_URL: stub.url,
        CHAT_MODEL: 'gpt-4o-mini',
        SUMMARY_TRIGGER: 'messages=4',
        SUMMARY_KEEP: 'messages=2',
      },
    });
    ({ token } = await app.guest());
    thread = (await (
      await app.api('/api/threads', { method: 'POST', token, json: { title: 'folded often' } })
    ).json()) as ThreadDto;
  });
  afterAll(async () => {
    await app?.stop();
    await stub?.close();
  });

  it('lists fold revisions covering contiguous ranges, each with a diff against the one before', async () => {
    // One fold per turn from the second on: wait for each, so the ranges are many and small.
    await sendTurns(1);
    for (let fold = 1; fold <= 4; fold += 1) {
      await sendTurns(1);
      await settled(fold);
    }
    const list = await revisions();
    expect(list.length).toBe(4);
    expect(list.map((revision) => revision.revision)).toEqual(list.map((_, index) => index + 1));
    expect(list.every((revision) => revision.author === 'fold')).toBe(true);
    expect(list[0]?.fromSeq).toBe(1);
    list.slice(1).forEach((revision, index) => expect(revision.fromSeq).toBe((list[index]?.throughSeq ?? 0) + 1));
    for (const revision of list) {
      expect(revision.throughSeq).toBeGreaterThanOrEqual(revision.fromSeq);
      expect(revision).toMatchObject({ model: 'gpt-4o-mini', redacted: false, authorId: null });
      expect(revision.tokensIn).toBeGreaterThan(0);
      // The stub keeps the CODE-n identifiers: the retention figure counts them.
      expect(revision.identifiersKept).toBeGreaterThan(0);
      expect(revision.identifiersTotal).toBeGreaterThanOrEqual(revision.identifiersKept ?? 0);
    }
    // The first revision is all additions; later ones append a segment: the earlier text stays, nothing is removed.
    expect(list[0]?.diff.every((line) => line.op === 'add')).toBe(true);
    expect(list[1]?.diffStats).toEqual({ added: 2, removed: 0 });
    expect(list[1]?.text.startsWith(`${list[0]?.text}\n\n`)).toBe(true);
    expect(list.map((revision) => revision.segments)).toEqual([1, 2, 3, 4]);

    const current = await detail();
    expect(current.transcript.messages).toBe(10);
    expect(current.revisions.map((revision) => revision.revision)).toEqual(list.map((revision) => revision.revision));
    expect(current.context.coveredThroughSeq).toBe(list.at(-1)?.throughSeq);
    const packEntries = current.pack.messages.filter((message) => message.seq !== undefined);
    expect(packEntries.length).toBeGreaterThan(0);
    expect(packEntries.every((message) => message.tokens > 0)).toBe(true);
    expect(current.pack.summary?.revision).toBe(list.at(-1)?.revision);
  });

  it('stores an admin correction as a revision that the next fold builds on', async () => {
    const before = await detail();
    const events: ThreadEvent[] = [];
    const unsubscribe = app.application.deps.events.subscribe(thread.id, (event) => events.push(event));

    const stale = await app.api(`/api/admin/threads/${thread.id}/summary`, {
      method: 'PUT',
      token: ADMIN_TOKEN,
      json: { text: 'stale', expectedRevision: before.context.revision - 1 },
    });
    expect(stale.status).toBe(409);

    const corrected = await app.api(`/api/admin/threads/${thread.id}/summary`, {
      method: 'PUT',
      token: ADMIN_TOKEN,
      json: { text: 'Corrected by an admin: the customer id is CODE-4242.', expectedRevision: before.context.revision },
    });
    expect(corrected.status).toBe(200);
    const revision = (await corrected.json()) as {
      revision: number;
      fromSeq: number;
      throughSeq: number;
      tokens: number;
    };
    expect(revision).toMatchObject({
      revision: before.context.revision + 1,
      fromSeq: 1,
      throughSeq: before.context.coveredThroughSeq,
    });
    expect(revision.tokens).toBeGreaterThan(0);
    unsubscribe();
    expect(events).toContainEqual({
      type: 'summary-updated',
      threadId: thread.id,
      revision: revision.revision,
      coveredThroughSeq: revision.throughSeq,
      tokens: revision.tokens,
    });

    const adminRevision = (await revisions()).at(-1);
    expect(adminRevision).toMatchObject({
      author: 'admin',
      authorId: 'admin-token',
      fromSeq: 1,
      throughSeq: revision.throughSeq,
      model: null,
    });

    const summaryCallsBefore = stub.requests.filter((request) => request.kind === 'summary').length;
    await sendTurns(2);
    await settled(revision.revision + 1);
    const later = stub.requests.filter((request) => request.kind === 'summary').slice(summaryCallsBefore);
    expect(later.length).toBeGreaterThan(0);
    expect(requestText(later[0] as StubRequest)).toContain('Corrected by an admin: the customer id is CODE-4242.');
    const next = (await revisions()).find((entry) => entry.revision === revision.revision + 1);
    expect(next).toMatchObject({ author: 'fold', fromSeq: revision.throughSeq + 1 });
    expect(next?.text).toContain('CODE-4242');
  });

  it('rebuilds the summary from the transcript as a new revision covering from the context start', async () => {
    const before = await detail();
    const summaryCallsBefore = stub.requests.filter((request) => request.kind === 'summary').length;
    const accepted = await app.api(`/api/admin/threads/${thread.id}/rebuild-summary`, {
      method: 'POST',
      token: ADMIN_TOKEN,
    });
    expect(accepted.status).toBe(202);
    const { jobId } = (await accepted.json()) as { jobId: string };
    expect(jobId).toEqual(expect.any(String));

    let rebuilt: SummaryRevisionDto | undefined;
    await waitFor(
      async () => {
        rebuilt = (await revisions()).find((entry) => entry.author === 'rebuild');
        return rebuilt !== undefined;
      },
      { timeoutMs: 30_000, what: 'the rebuild revision' },
    );
    expect(rebuilt).toMatchObject({ authorId: 'admin-token', fromSeq: 1, model: 'gpt-4o-mini' });
    expect(rebuilt?.revision).toBeGreaterThan(before.context.revision);
    expect(rebuilt?.throughSeq).toBeGreaterThanOrEqual(before.context.coveredThroughSeq);
    // From scratch: the first summarizer call saw the transcript from #1 and no previous summary (so not the correction).
    const calls = stub.requests.filter((request) => request.kind === 'summary').slice(summaryCallsBefore);
    expect(requestText(calls[0] as StubRequest)).toMatch(/New messages \(#1 to #\d+\)/);
    expect(requestText(calls[0] as StubRequest)).toContain('CODE-1001');
    expect(rebuilt?.text).toContain('CODE-1001');
    expect(rebuilt?.text).not.toContain('CODE-4242');
    const after = await detail();
    expect(after.context.summaryText).toBe((await revisions()).at(-1)?.text);
  });

  it('enqueues a fold on demand and records every admin write in the audit log', async () => {
    const accepted = await app.api(`/api/admin/threads/${thread.id}/summarize`, { method: 'POST', token: ADMIN_TOKEN });
    expect(accepted.status).toBe(202);
    expect(((await accepted.json()) as { jobId: string | null }).jobId).toEqual(expect.any(String));

    const audit = (await (
      await app.api(`/api/admin/audit?threadId=${thread.id}`, { token: ADMIN_TOKEN })
    ).json()) as AuditPageDto;
    // Admin reads of the thread are audited too (thread.viewed); the writes are these three, newest first.
    expect(audit.entries.every((entry) => entry.actor === 'admin-token' && entry.threadId === thread.id)).toBe(true);
    const writes = audit.entries.filter((entry) => entry.action !== 'thread.viewed');
    expect(writes.map((entry) => entry.action)).toEqual([
      'summary.fold-requested',
      'summary.rebuild-requested',
      'summary.corrected',
    ]);
    expect(writes[2]?.details).toMatchObject({ fromSeq: 1 });

    const missing = await app.api('/api/admin/threads/00000000-0000-4000-8000-000000000000/summarize', {
      method: 'POST',
      token: ADMIN_TOKEN,
    });
    expect(missing.status).toBe(404);
  });
});
