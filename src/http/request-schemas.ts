import { z } from 'zod';
import { AppError } from '../core/errors/app-error';

/** Request schemas of the REST API (also the source of the OpenAPI document). */
export const threadIdParams = z.object({ id: z.string().uuid() });
export const messageIdParams = z.object({ id: z.string().uuid(), messageId: z.string().uuid() });
export const createThreadBody = z.object({ title: z.string().trim().min(1).max(200).optional() }).strict();
export const renameThreadBody = z.object({ title: z.string().trim().min(1).max(200) }).strict();
export const listThreadsQuery = z.object({
  cursor: z.string().max(500).optional(),
  limit: z.coerce.number().int().min(1).max(100).default(20),
});
export const listMessagesQuery = z
  .object({
    before: z.coerce.number().int().min(1).optional(),
    after: z.coerce.number().int().min(0).optional(),
    limit: z.coerce.number().int().min(1).max(200).default(50),
  })
  .refine((query) => query.before === undefined || query.after === undefined, 'use either before or after, not both');
export const sendMessageBody = z
  .object({
    content: z.string(),
    clientMessageId: z.string().min(1).max(100).optional(),
  })
  .strict();

export const threadSettingsBody = z
  .object({
    trigger: z.string().max(200).nullable().optional(),
    keep: z.string().max(200).nullable().optional(),
    memory: z.enum(['summary', 'window-only']).optional(),
    summaryPrompt: z.string().max(8000).nullable().optional(),
    recallTokens: z.number().int().min(0).nullable().optional(),
    recallScope: z.enum(['thread', 'user']).nullable().optional(),
  })
  .strict();
export const forgetMessageQuery = z.object({
  only: z
    .enum(['true', 'false', '1', '0'])
    .optional()
    .transform((value) => value === 'true' || value === '1'),
});
export const exportThreadQuery = z.object({ format: z.enum(['json', 'markdown']).default('json') });
/** GET /api/search and /api/threads/:id/search (websearch syntax: words, "a phrase", -word, or). */
export const searchQuery = z.object({
  q: z
    .string({ error: 'q is required: the words to search for' })
    .trim()
    .min(1, 'type something to search for')
    .max(500)
    .refine((text) => !text.includes('\u0000'), 'the words hold a NUL character (\\u0000)'),
  cursor: z.string().max(100).optional(),
  limit: z.coerce.number().int().min(1).max(50).default(20),
});
export const toolRunParams = z.object({ id: z.string().uuid() });
/** POST /api/memory and PATCH /api/memory/:id (1 to 1,000 characters once trimmed; checked by the use case). */
export const savedMemoryBody = z
  .object({ text: z.string({ error: 'text is required: the text to remember' }) })
  .strict();

/** Parses or throws VALIDATION naming the first problem. */
export function parseOrThrow<T>(schema: z.ZodType<T>, value: unknown, what: string): T {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const where = issue?.path.length ? `${issue.path.join('.')}: ` : '';
  throw new AppError('VALIDATION', `Invalid ${what}: ${where}${issue?.message ?? 'malformed'}`);
}

export const forkThreadBody = z.object({ atMessageId: z.string().uuid() }).strict();
export const editMessageBody = z
  .object({
    content: z.string(),
    clientMessageId: z.string().min(1).max(100).optional(),
  })
  .strict();
