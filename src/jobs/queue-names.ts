import { z } from 'zod';

/** Queue contracts: names and payloads. Payloads carry ids, never message bodies. */
export const SUMMARY_QUEUE = 'summary';

export const foldJobPayload = z.object({
  threadId: z.string().uuid(),
  reason: z.string().max(500).default(''),
  force: z.boolean().default(false),
});
export type FoldJobPayload = z.infer<typeof foldJobPayload>;

/** Async tool runs: the payload is the run id (the run row in Postgres holds everything else). */
export const TOOLS_QUEUE = 'tools';

export const toolJobPayload = z.object({ runId: z.string().uuid() });
export type ToolJobPayload = z.infer<typeof toolJobPayload>;

/** Job names on the summary queue: a fold, or a rebuild of the whole summary from the transcript. */
export const FOLD_JOB = 'fold';
export const REBUILD_JOB = 'rebuild';

export const rebuildJobPayload = z.object({
  threadId: z.string().uuid(),
  /** Who asked (a JWT's sub, or `admin-token`): recorded as the revision's author id. */
  actorId: z.string().min(1).max(200),
});
export type RebuildJobPayload = z.infer<typeof rebuildJobPayload>;

/** Rebuild of a summary withdrawn by a forget (memory controls): from the remaining transcript, no actor. */
export const FORGET_REBUILD_JOB = 'forget-rebuild';

export const forgetRebuildJobPayload = z.object({
  threadId: z.string().uuid(),
  /** The thread's version after the forget: one job per withdrawal. */
  version: z.number().int().min(0),
});
export type ForgetRebuildJobPayload = z.infer<typeof forgetRebuildJobPayload>;

/**
 * The fold of an idle thread (the provider's prompt cache has gone cold): one delayed job per thread, pushed back by
 * each turn, under its own deduplication id so it never swallows a trigger's fold.
 */
export const IDLE_FOLD_JOB = 'idle-fold';

export const idleFoldJobPayload = z.object({ threadId: z.string().uuid() });
export type IdleFoldJobPayload = z.infer<typeof idleFoldJobPayload>;

/** A chat's automatic title by the summarizer model, after its first exchange (core/titles): one per thread. */
export const TITLE_JOB = 'title';

export const titleJobPayload = z.object({ threadId: z.string().uuid() });
export type TitleJobPayload = z.infer<typeof titleJobPayload>;

/** Any job of the summary queue. */
export type SummaryJobPayload =
  FoldJobPayload | RebuildJobPayload | ForgetRebuildJobPayload | IdleFoldJobPayload | TitleJobPayload;
