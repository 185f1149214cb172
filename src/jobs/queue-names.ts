import { z } from 'zod';

/** Queue contracts: names and payloads. Payloads carry ids, never message bodies. */
export const SUMMARY_QUEUE = 'summary';

export const foldJobPayload = z.object({
  threadId: z.string().uuid(),
  reason: z.string().max(500).default(''),
  force: z.boolean().default(false),
});
export type FoldJobPayload = z.infer<typeof foldJobPayload>;

/** Job names on the summary queue: a fold, or a rebuild of the whole summary from the transcript. */
export const FOLD_JOB = 'fold';
export const REBUILD_JOB = 'rebuild';

export const rebuildJobPayload = z.object({
  threadId: z.string().uuid(),
  /** Who asked (a JWT's sub, or `admin-token`): recorded as the revision's author id. */
  actorId: z.string().min(1).max(200),
});
export type RebuildJobPayload = z.infer<typeof rebuildJobPayload>;

/** Any job of the summary queue. */
export type SummaryJobPayload = FoldJobPayload | RebuildJobPayload;

/** Async tool runs: the payload is the run id (the run row in Postgres holds everything else). */
export const TOOLS_QUEUE = 'tools';

export const toolJobPayload = z.object({ runId: z.string().uuid() });
export type ToolJobPayload = z.infer<typeof toolJobPayload>;
