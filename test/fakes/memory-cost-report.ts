import type { ModelUsage } from '../../src/core/costs/estimate-costs';
import type { CostGrouping, CostReport, UsageGroup } from '../../src/core/ports';
import type { CallRow, MemoryDatabase } from './memory-database';

/** The label of the calls of deleted threads (and of no thread) in the costs by thread (src/db/cost-report.ts). */
const DELETED_THREAD_LABEL = '(deleted thread)';

type Keyed = { key: string; label: string };

/** The day of `timeZone`'s calendar a call was made on, as YYYY-MM-DD. */
function dayOf(at: Date, timeZone: string): string {
  return new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(at);
}

function keyOf(database: MemoryDatabase, call: CallRow, by: CostGrouping, timeZone: string): Keyed {
  if (by === 'day') {
    const day = dayOf(call.createdAt, timeZone);
    return { key: day, label: day };
  }
  if (by === 'user') return { key: call.userId ?? '', label: call.userId ?? '(erased user)' };
  const thread = call.threadId === null ? undefined : database.threads.get(call.threadId);
  return { key: call.threadId ?? '', label: thread?.title ?? DELETED_THREAD_LABEL };
}

/** One call's usage, as the adapter's `calls` step reads a row. */
function usageOf(database: MemoryDatabase, call: CallRow): ModelUsage {
  const reportedPrompt = call.reportedPromptTokens !== null && call.reportedPromptTokens > 0;
  const cacheReported = reportedPrompt && call.reportedCachedTokens != null;
  const answer = call.messageId === null ? undefined : database.messages.find((m) => m.id === call.messageId);
  return {
    model: call.model,
    calls: 1,
    promptTokens: reportedPrompt ? (call.reportedPromptTokens ?? 0) : call.estimatedPromptTokens,
    cachedTokens: call.reportedCachedTokens ?? 0,
    cacheWriteTokens: call.reportedCacheWriteTokens ?? 0,
    completionTokens: call.reportedCompletionTokens ?? answer?.tokens ?? 0,
    estimatedCalls: !reportedPrompt || call.reportedCompletionTokens === null ? 1 : 0,
    cacheReportedPromptTokens: cacheReported ? (call.reportedPromptTokens ?? 0) : 0,
    cacheReportedCachedTokens: cacheReported
      ? Math.min(call.reportedCachedTokens ?? 0, call.reportedPromptTokens ?? 0)
      : 0,
  };
}

function add(into: ModelUsage, usage: ModelUsage): void {
  into.calls += usage.calls;
  into.promptTokens += usage.promptTokens;
  into.cachedTokens += usage.cachedTokens;
  into.cacheWriteTokens = (into.cacheWriteTokens ?? 0) + (usage.cacheWriteTokens ?? 0);
  into.completionTokens += usage.completionTokens;
  into.estimatedCalls += usage.estimatedCalls;
  into.cacheReportedPromptTokens += usage.cacheReportedPromptTokens;
  into.cacheReportedCachedTokens += usage.cacheReportedCachedTokens;
}

/** Sums usages per model, models in order. */
function perModel(usages: ModelUsage[]): ModelUsage[] {
  const byModel = new Map<string, ModelUsage>();
  for (const usage of usages) {
    const entry = byModel.get(usage.model);
    if (entry) add(entry, usage);
    else byModel.set(usage.model, { ...usage });
  }
  return [...byModel.values()].sort((a, b) => a.model.localeCompare(b.model));
}

/**
 * CostReport over the fake's call rows, as src/db/cost-report.ts reads model_calls (groups in key order, the top
 * `limit` by prompt tokens). Postgres-only: `estimated_completion_tokens`, which the retention job keeps on a call row
 * when its answer goes (the fake's rows never lose their answer's tokens that way).
 */
export function createMemoryCostReport(database: MemoryDatabase, options: { timeZone?: string } = {}): CostReport {
  const timeZone = options.timeZone ?? 'UTC';
  return {
    async usageBy({ by, since, limit }) {
      const groups = new Map<string, { label: string; usages: ModelUsage[] }>();
      for (const call of database.calls) {
        if (call.createdAt < since) continue;
        const { key, label } = keyOf(database, call, by, timeZone);
        const group = groups.get(key) ?? { label, usages: [] };
        if (label < group.label) group.label = label;
        group.usages.push(usageOf(database, call));
        groups.set(key, group);
      }
      const promptOf = (usages: ModelUsage[]) => usages.reduce((sum, usage) => sum + usage.promptTokens, 0);
      const ranked = [...groups.entries()]
        .sort(([a, x], [b, y]) => promptOf(y.usages) - promptOf(x.usages) || (a < b ? -1 : a > b ? 1 : 0))
        .slice(0, limit)
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
      const shown: UsageGroup[] = ranked.map(([key, group]) => ({
        key,
        label: group.label,
        usage: perModel(group.usages),
      }));
      return { groups: shown, total: perModel([...groups.values()].flatMap((group) => group.usages)) };
    },
  };
}
