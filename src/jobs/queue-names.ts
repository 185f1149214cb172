import { z } from 'zod';

/** Queue contracts: names and payloads. Payloads carry ids, never message bodies. */
export const SUMMARY_QUEUE = 'summary';

export const foldJobPayload = z.object({
  threadId: z.string().uuid(),
  reason: z.string().max(500).default(''),
  force: z.boolean().default(false),
});
export type FoldJobPayload = z.infer<typeof foldJobPayload>;
