import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TokenEstimateDto } from '../../src/shared/admin-api';
import type { ContextPackDto, ThreadDetailDto } from '../../src/shared/api';
import { startOpenAIStub, type OpenAIStub } from '../support/openai-stub';
import { classifyRequest, heldSummaryResponder } from '../support/summary-stub';
import { startTestApp, type TestApp } from '../support/test-app';
import { memoryKit } from '../memory/memory-test-kit';

const ADMIN = { Authorization: 'Bearer test-admin-token-0123456789' };
const TRIGGER_TOKENS = 900;

// Issue 17 item 6: a model whose tokenizer counts 30% more than our estimate. Its reported usage corrects the
// estimate (only upwards): the budget guard and the fold trigger use the corrected figure, admins see it, and a
// restarted server starts from the stored calls.
describe('the estimate correction from reported prompt tokens', () => {
  let stub: OpenAIStub;
  let app: TestApp;
  let kit: ReturnType<typeof memoryKit>;
  const summaries = heldSummaryResponder();
  const env = () => ({
    OPENAI_BASE_URL: stub.url,
    SUMMARY_TRIGGER: `tokens=${TRIGGER_TOKENS}`,
    SUMMARY_KEEP: 'messages=2',
    SUMMARY_MAX_TOKENS: '300',
  });
  const estimate = async (target: TestApp) =>
    (await (await target.api('/api/admin/token-estimate', { headers: ADMIN })).json()) as TokenEstimateDto;

  beforeAll(async () => {
    stub = await startOpenAIStub({ classifyRequest, responder: summaries.responder, promptTokenScale: 1.3 });
    app = await startTestApp({ env: env() });
    kit = memoryKit(app, (await app.guest()).token);
  });
  afterAll(async () => {
    summaries.release();
    await app?.stop();
    await stub?.close();
  });

  it("learns the provider's count, shrinks the pack budget, folds earlier, and shows it to admins", async () => {
    expect(await estimate(app)).toMatchObject({ observedRatio: null, factor: 1, samples: 0 });
    const thread = await kit.createThread();
    // Folds are held: the trigger's decision stays visible as foldPending instead of being folded away.
    summaries.hold();
    const words = 'alpha bravo charlie delta echo foxtrot golf hotel india juliet '.repeat(4);
    let pendingAt: number | null = null;
    for (let turn = 1; turn <= 12 && pendingAt === null; turn += 1) {
      await kit.send(thread.id, `Turn ${turn}: ${words}`);
      const detail: ThreadDetailDto = await kit.detail(thread.id);
      if (detail.context.foldPending) pendingAt = detail.context.windowTokens + detail.context.summaryTokens;
    }
    // Due by the corrected count (estimate × 1.3 >= trigger) while our raw estimate is still under the trigger.
    expect(pendingAt).not.toBeNull();
    expect(pendingAt).toBeLessThan(TRIGGER_TOKENS);
    expect(pendingAt! * 1.3).toBeGreaterThanOrEqual(TRIGGER_TOKENS);

    const learned = await estimate(app);
    expect(learned.samples).toBeGreaterThan(0);
    expect(learned.observedRatio).toBeGreaterThan(1.25);
    expect(learned.observedRatio).toBeLessThan(1.35);
    expect(learned.factor).toBeCloseTo(learned.observedRatio!, 5);

    // The pack budget is the budget as the provider counts: estimate × factor stays within it.
    const pack = (await (
      await app.api(`/api/threads/${thread.id}/context`, { token: kit.token })
    ).json()) as ContextPackDto;
    const { budget } = app.application.deps.settings;
    expect(pack.budget).toBeLessThanOrEqual(Math.floor(budget / learned.factor));
    expect(pack.tokens * learned.factor).toBeLessThanOrEqual(budget);
    summaries.release();
  });

  it('starts a restarted server from the stored calls', async () => {
    const again = await startTestApp({
      env: { ...env(), REDIS_PREFIX: `t${randomBytes(5).toString('hex')}` },
      database: { url: app.databaseUrl },
    });
    try {
      const seeded = await estimate(again);
      expect(seeded.samples).toBeGreaterThan(0);
      expect(seeded.factor).toBeGreaterThan(1.25);
    } finally {
      await again.stop();
    }
  });
});

describe('a provider that counts lower', () => {
  let stub: OpenAIStub;
  let app: TestApp;
  beforeAll(async () => {
    stub = await startOpenAIStub({ classifyRequest, promptTokenScale: 0.7 });
    app = await startTestApp({ env: { OPENAI_BASE_URL: stub.url } });
  });
  afterAll(async () => {
    await app?.stop();
    await stub?.close();
  });

  it('never loosens the budget guard', async () => {
    const kit = memoryKit(app, (await app.guest()).token);
    const thread = await kit.createThread();
    for (let turn = 1; turn <= 3; turn += 1)
      await kit.send(thread.id, `Message ${turn}: ${'some words to count '.repeat(10)}`);
    const seen = (await (await app.api('/api/admin/token-estimate', { headers: ADMIN })).json()) as TokenEstimateDto;
    expect(seen.observedRatio).toBeLessThan(0.75);
    expect(seen.factor).toBe(1);
    const pack = (await (
      await app.api(`/api/threads/${thread.id}/context`, { token: kit.token })
    ).json()) as ContextPackDto;
    expect(pack.budget).toBeLessThanOrEqual(app.application.deps.settings.budget);
  });
});
