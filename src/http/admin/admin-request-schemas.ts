import { z } from 'zod';
import { SERVICE_KEY_ID } from '../../core/spend/service-key-of';

/** Request schemas of the admin API (also the source of its OpenAPI document). */
export const adminThreadsQuery = z.object({
  query: z.string().trim().max(200).optional(),
  cursor: z.string().max(500).optional(),
  limit: z.coerce.number().int().min(1).max(200).default(50),
  sort: z.enum(['activity', 'summary', 'lag', 'errors']).default('activity'),
});
export const summaryRevisionsQuery = z.object({
  /** The newest `limit` revisions, oldest first. */
  limit: z.coerce.number().int().min(1).max(500).default(100),
});
export const correctSummaryBody = z
  .object({
    text: z.string().min(1).max(100_000),
    /** The revision the admin edited; a CONFLICT when the summary moved on since. */
    expectedRevision: z.number().int().min(1).optional(),
  })
  .strict();
export const adminSessionBody = z.object({ token: z.string().min(1).max(4096) }).strict();
export const auditQuery = z.object({
  threadId: z.string().uuid().optional(),
  cursor: z.string().max(500).optional(),
  limit: z.coerce.number().int().min(1).max(200).default(50),
});
export const modelCallsQuery = z.object({
  /** The `nextCursor` of a previous page: calls older than it. */
  before: z.string().max(500).optional(),
  limit: z.coerce.number().int().min(1).max(2000).default(500),
});

export const costsQuery = z.object({
  by: z.enum(['day', 'user', 'thread']).default('day'),
  /** Calls of the last `days` days (of SPEND_LIMIT_TIMEZONE, UTC by default; today included). */
  days: z.coerce.number().int().min(1).max(366).default(30),
  limit: z.coerce.number().int().min(1).max(500).default(50),
});

/** Most members one group may be given in one PUT. */
const MAX_GROUP_MEMBERS = 10_000;

const limitText = z.string().trim().min(1).max(64);
export const userLimitBody = z.strictObject({ limit: limitText });
export const serviceKeyParams = z.object({
  keyId: z.string().regex(SERVICE_KEY_ID, 'the 16 hex digits of a service key id (GET /api/admin/spend-limits)'),
});
export const groupParams = z.object({
  name: z
    .string()
    .min(1)
    .max(100)
    .regex(/^[A-Za-z0-9 _.-]+$/, 'letters, digits, space, _ . - only'),
});
export const groupBody = z.strictObject({
  limit: limitText.nullable(),
  members: z.array(z.string().min(1).max(200)).max(MAX_GROUP_MEMBERS).optional(),
});
