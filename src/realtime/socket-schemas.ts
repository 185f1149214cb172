import { z } from 'zod';

/** Text a client sends: Postgres' text cannot hold a NUL character, so it is refused here, with a clear message. */
const clientText = z.string().refine((text) => !text.includes('\u0000'), {
  message: 'holds a NUL character (\\u0000), which no text here can store',
});

/**
 * Payload schemas of the client events (src/shared/socket-events.ts). Strict: unknown keys are refused.
 * Content length is not capped here: sendMessage answers TOO_LARGE with the limit in the message.
 */
export const threadJoinPayload = z
  .object({
    threadId: z.string().uuid(),
    afterSeq: z.number().int().min(0).optional(),
  })
  .strict();

export const threadLeavePayload = z.object({ threadId: z.string().uuid() }).strict();

export const messageSendPayload = z
  .object({
    threadId: z.string().uuid(),
    content: clientText,
    clientMessageId: z.string().min(1).max(100),
  })
  .strict();

export const messageEditPayload = z
  .object({
    threadId: z.string().uuid(),
    messageId: z.string().uuid(),
    content: clientText,
    clientMessageId: z.string().min(1).max(100),
  })
  .strict();

export const turnCancelPayload = z.object({ threadId: z.string().uuid() }).strict();

export const toolCancelPayload = z.object({ runId: z.string().min(1).max(100) }).strict();
