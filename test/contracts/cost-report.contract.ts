import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { ModelUsage } from '../../src/core/costs/estimate-costs';
import type { ModelCallRecord } from '../../src/core/ports';
import type { MakePortStores, PortStores } from './port-fixtures';
import { newThread, pause } from './store-fixtures';

/** Records a call of `model` (a summary, no usage reported unless given). */
async function call(stores: PortStores, fields: Partial<ModelCallRecord> & Pick<ModelCallRecord, 'model'>) {
  await stores.calls.record({
    threadId: null,
    messageId: null,
    purpose: 'summary',
    estimatedPromptTokens: 0,
    reportedPromptTokens: null,
    reportedCompletionTokens: null,
    latencyMs: 1,
    ...fields,
  });
}

/**
 * A moment after every call recorded so far: the report reads every call since `since`, so a case that reads from
 * here on sees only its own calls (Postgres: the cases share one database).
 */
async function from(): Promise<Date> {
  await pause(3);
  return new Date();
}

/** Usage entries of this case's models only (the day's group and the total also hold other cases' models). */
const own = (tag: string, usage: ModelUsage[]) => usage.filter((entry) => entry.model.startsWith(tag));

const byKey = <T extends { key: string }>(groups: T[]) => [...groups].sort((a, b) => (a.key < b.key ? -1 : 1));

/**
 * The CostReport contract (the admin's estimated costs: tokens per day, user and thread, and their total). What
 * Postgres alone does: `estimated_completion_tokens`, the answer's tokens the retention job keeps on a call row when
 * the answer goes, and days of a SPEND_LIMIT_TIMEZONE other than UTC (both sides take it; only UTC is run here).
 */
export function describeCostReportContract(name: string, make: MakePortStores): void {
  describe(`CostReport contract: ${name}`, () => {
    it("sums a day's calls per model: reported prompt tokens (else the estimate), cache reads and writes, completions, estimated calls", async () => {
      const stores = make();
      const tag = `m${randomUUID().slice(0, 8)}`;
      const since = await from();
      await call(stores, {
        model: `${tag}-large`,
        estimatedPromptTokens: 100,
        reportedPromptTokens: 120,
        reportedCompletionTokens: 30,
        reportedCachedTokens: 50,
        reportedCacheWriteTokens: 10,
      });
      await call(stores, { model: `${tag}-large`, estimatedPromptTokens: 200 });
      // A reported 0 is no report: the estimate counts, and the call is an estimated one.
      await call(stores, {
        model: `${tag}-large`,
        estimatedPromptTokens: 80,
        reportedPromptTokens: 0,
        reportedCompletionTokens: 5,
      });
      await call(stores, {
        model: `${tag}-small`,
        estimatedPromptTokens: 10,
        reportedPromptTokens: 12,
        reportedCompletionTokens: 3,
      });
      const { groups, total } = await stores.costs.usageBy({ by: 'day', since, limit: 10 });
      const today = new Date().toISOString().slice(0, 10);
      const expected: ModelUsage[] = [
        {
          model: `${tag}-large`,
          calls: 3,
          promptTokens: 400,
          cachedTokens: 50,
          cacheWriteTokens: 10,
          completionTokens: 35,
          estimatedCalls: 2,
          cacheReportedPromptTokens: 120,
          cacheReportedCachedTokens: 50,
        },
        {
          model: `${tag}-small`,
          calls: 1,
          promptTokens: 12,
          cachedTokens: 0,
          cacheWriteTokens: 0,
          completionTokens: 3,
          estimatedCalls: 0,
          cacheReportedPromptTokens: 0,
          cacheReportedCachedTokens: 0,
        },
      ];
      expect(groups.map((group) => ({ key: group.key, label: group.label }))).toEqual([{ key: today, label: today }]);
      expect(own(tag, groups[0]?.usage ?? [])).toEqual(expected);
      expect(own(tag, total)).toEqual(expected);
    });

    it('counts in the cached share only the calls that reported both prompt and cached tokens, never more cached than prompt', async () => {
      const stores = make();
      const model = `m${randomUUID().slice(0, 8)}`;
      const since = await from();
      const reported = { reportedCompletionTokens: 1 };
      await call(stores, { model, ...reported, reportedPromptTokens: 100, reportedCachedTokens: 40 });
      await call(stores, { model, ...reported, reportedPromptTokens: 200 });
      await call(stores, { model, ...reported, reportedPromptTokens: 50, reportedCachedTokens: 80 });
      await call(stores, { model, estimatedPromptTokens: 70, reportedCachedTokens: 30 });
      const { total } = await stores.costs.usageBy({ by: 'day', since, limit: 10 });
      expect(own(model, total)).toMatchObject([
        {
          calls: 4,
          promptTokens: 420,
          cachedTokens: 150,
          estimatedCalls: 1,
          cacheReportedPromptTokens: 150,
          cacheReportedCachedTokens: 90,
        },
      ]);
    });

    it('groups by user (the user a call names), the costliest `limit` of them, while the total counts every call since `since`', async () => {
      const stores = make();
      const model = `m${randomUUID().slice(0, 8)}`;
      const first = await newThread(stores);
      const second = await newThread(stores);
      const third = await newThread(stores);
      // Before `since`: had it counted, the third user would be the costliest.
      await call(stores, { model, threadId: third.id, estimatedPromptTokens: 5000 });
      const since = await from();
      await call(stores, { model, threadId: second.id, estimatedPromptTokens: 500 });
      await call(stores, { model, threadId: first.id, estimatedPromptTokens: 900 });
      await call(stores, {
        model,
        threadId: null,
        userId: first.ownerId,
        purpose: 'auxiliary',
        estimatedPromptTokens: 40,
      });
      await call(stores, { model, threadId: third.id, estimatedPromptTokens: 100 });
      const { groups, total } = await stores.costs.usageBy({ by: 'user', since, limit: 2 });
      const shown = groups.map((group) => ({
        key: group.key,
        label: group.label,
        prompt: own(model, group.usage)[0]?.promptTokens,
      }));
      expect(byKey(shown)).toEqual(
        byKey([
          { key: first.ownerId, label: first.ownerId, prompt: 940 },
          { key: second.ownerId, label: second.ownerId, prompt: 500 },
        ]),
      );
      expect(own(model, total)).toMatchObject([{ calls: 4, promptTokens: 1540 }]);
    });

    it("groups by thread under its title, and the calls of deleted threads and of no thread as one '(deleted thread)' row", async () => {
      const stores = make();
      const model = `m${randomUUID().slice(0, 8)}`;
      const kept = await newThread(stores, { title: 'Trip plans' });
      const gone = await newThread(stores);
      const alsoGone = await newThread(stores);
      const since = await from();
      await call(stores, { model, threadId: kept.id, estimatedPromptTokens: 300 });
      await call(stores, { model, threadId: gone.id, estimatedPromptTokens: 20 });
      await call(stores, { model, threadId: alsoGone.id, estimatedPromptTokens: 30 });
      await call(stores, { model, userId: kept.ownerId, purpose: 'auxiliary', estimatedPromptTokens: 4 });
      await stores.threads.deleteThread(gone.id);
      await stores.threads.deleteThread(alsoGone.id);
      const { groups } = await stores.costs.usageBy({ by: 'thread', since, limit: 10 });
      expect(
        byKey(groups).map((group) => ({ key: group.key, label: group.label, usage: own(model, group.usage) })),
      ).toMatchObject([
        { key: '', label: '(deleted thread)', usage: [{ calls: 3, promptTokens: 54 }] },
        { key: kept.id, label: 'Trip plans', usage: [{ calls: 1, promptTokens: 300 }] },
      ]);
    });
  });
}
