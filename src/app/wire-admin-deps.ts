import { modelsInUse } from '../config/env';
import type { SpendGate } from '../core/spend-gate/spend-gate';
import { createAdminThreadRepository } from '../db/admin-thread-repository';
import { createAuditRepository } from '../db/audit-repository';
import { createCostReport } from '../db/cost-report';
import { createSpendLimitAdminRepository } from '../db/spend-repository';
import { createAdminAuth } from '../http/admin/admin-auth';
import type { AdminHttpDeps } from '../http/admin/admin-deps';
import { serviceKeyId } from '../http/openai-facade/facade-principal';
import { foldLagPolicy } from '../jobs/sweeper';
import type { Wiring } from './application';
import { describeTools } from './describe-tools';
import type { Limits } from './wire-limits';
import { tokenEstimateOf, type Models } from './wire-models';
import type { Queues } from './wire-queues';
import type { Stores } from './wire-stores';
import type { Tools } from './wire-tools';

/** The admin routes: sign-in, threads, summaries, audit, jobs and queues, model calls, costs, tools, spend limits. */
export function adminDeps(
  { options, env, settings }: Wiring,
  parts: { stores: Stores; spend: SpendGate | undefined; models: Models; queues: Queues; tools: Tools; limits: Limits },
): AdminHttpDeps {
  const { stores, spend } = parts;
  return {
    auth: createAdminAuth({
      tokens: parts.limits.tokens,
      adminToken: options.adminToken,
      authSecret: options.authSecret,
      failures: parts.limits.rateLimits.authFailures,
      secureCookies: env.NODE_ENV === 'production',
      erasures: stores.erasures,
    }),
    threads: createAdminThreadRepository(stores.db),
    summaries: stores.summaries,
    audit: createAuditRepository(stores.db),
    jobs: parts.queues.folds,
    queues: parts.queues.registry,
    foldLagPolicy: foldLagPolicy(settings),
    modelCalls: parts.models.callHistory,
    costs: {
      report: createCostReport(stores.db, { timeZone: env.SPEND_LIMIT_TIMEZONE }),
      prices: env.MODEL_PRICES,
      timeZone: env.SPEND_LIMIT_TIMEZONE,
      ...(spend ? { limitOf: (userId: string) => spend.writtenLimitOf(userId) } : {}),
    },
    tokenEstimate: () => tokenEstimateOf(settings.correction),
    tools: () => describeTools(parts.tools.registry, parts.tools.mcp),
    spendLimits: {
      store: createSpendLimitAdminRepository(stores.db),
      enforced: env.SPEND_LIMITS === 'on',
      timeZone: env.SPEND_LIMIT_TIMEZONE,
      prices: env.MODEL_PRICES,
      models: modelsInUse(env),
      defaults: {
        user: env.SPEND_LIMIT_USER ?? null,
        guest: env.SPEND_LIMIT_GUEST ?? null,
        guestsPerAddress: env.SPEND_LIMIT_GUESTS_PER_ADDRESS ?? null,
      },
      serviceKeyIds: env.OPENAI_FACADE_KEYS.map(serviceKeyId),
    },
  };
}
