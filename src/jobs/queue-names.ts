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
