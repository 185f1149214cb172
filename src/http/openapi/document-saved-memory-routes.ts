import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import type { SavedMemoryDto, SavedMemoryListDto } from '../../shared/api';
import { savedMemoryBody } from '../request-schemas';
import { ADMIN_SESSION, ADMIN_TOKEN, BEARER, errors, json } from './openapi-helpers';
import { adminUserParams } from '../admin/admin-user-routes';

const secured: Record<string, string[]>[] = [{ [BEARER]: [] }];
const serviceUser = z.object({
  'x-user-id': z
    .string()
    .optional()
    .describe(
      "With a service key of OPENAI_FACADE_KEYS as the bearer token (accepted on /api/memory only): the end user it acts for, the user /v1 stores for that key and end user. Ignored with a user's token.",
    ),
});

export const savedMemoryDto = z
  .strictObject({
    id: z.string().uuid(),
    text: z.string(),
    source: z
      .strictObject({ threadId: z.string().uuid(), seq: z.number().int() })
      .nullable()
      .describe(
        'The message that asked the model to remember it (save_memory); null for an item added by hand or whose chat was deleted.',
      ),
    inContext: z
      .boolean()
      .describe(
        'Whether the packs carry it: false for older items left out over USER_MEMORY_TOKENS (the newest win), and for proposals.',
      ),
    status: z
      .enum(['pending', 'active'])
      .describe(
        'pending: proposed by the model (SAVE_MEMORY_TOOL=confirm), in no prompt until approved (POST /api/memory/{id}/approve) or gone once dismissed; active: in every pack within USER_MEMORY_TOKENS.',
      ),
    createdAt: z.iso.datetime({ offset: true }),
    updatedAt: z.iso.datetime({ offset: true }),
  })
  .meta({ id: 'SavedMemory' });
export const savedMemoryListDto = z.strictObject({ items: z.array(savedMemoryDto) }).meta({ id: 'SavedMemoryList' });
const itemParams = z.object({ id: z.string().uuid() });

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Assert<T extends true> = T;
export type SavedMemorySchemaAgreement = [
  Assert<Same<z.infer<typeof savedMemoryDto>, SavedMemoryDto>>,
  Assert<Same<z.infer<typeof savedMemoryListDto>, SavedMemoryListDto>>,
];

const about =
  "Saved memories are short texts the model gets in every thread of the user, quoted as the user's saved notes in the leading system message after the system prompt (within USER_MEMORY_TOKENS). The model's save_memory proposes items (status pending) unless SAVE_MEMORY_TOOL=on; proposals count toward MAX_MEMORY_ITEMS. Writes (approvals and dismissals too) count against MEMORY_WRITES_PER_MINUTE. The bearer token is a user's token, or a service key with X-User-Id.";

/** The caller's saved memories (issue 27). */
export function documentSavedMemoryRoutes(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: 'get',
    path: '/api/memory',
    tags: ['saved memories'],
    security: secured,
    summary: "The caller's saved memories, newest first",
    description: about,
    request: { headers: serviceUser },
    responses: { 200: json(savedMemoryListDto, 'The items'), ...errors('VALIDATION', 'UNAUTHORIZED') },
  });
  registry.registerPath({
    method: 'post',
    path: '/api/memory',
    tags: ['saved memories'],
    security: secured,
    summary: 'Save a memory',
    description: `${about} \`text\` is 1 to 1,000 characters once trimmed (VALIDATION names the field); QUOTA_EXCEEDED past MAX_MEMORY_ITEMS (default 200).`,
    request: { headers: serviceUser, body: { content: { 'application/json': { schema: savedMemoryBody } } } },
    responses: {
      201: json(savedMemoryDto, 'The new item'),
      ...errors('VALIDATION', 'UNAUTHORIZED', 'QUOTA_EXCEEDED', 'RATE_LIMITED'),
    },
  });
  registry.registerPath({
    method: 'patch',
    path: '/api/memory/{id}',
    tags: ['saved memories'],
    security: secured,
    summary: "Change a saved memory's text",
    description: `${about} Another user's item is a 404.`,
    request: {
      params: itemParams,
      headers: serviceUser,
      body: { content: { 'application/json': { schema: savedMemoryBody } } },
    },
    responses: {
      200: json(savedMemoryDto, 'The item'),
      ...errors('VALIDATION', 'UNAUTHORIZED', 'NOT_FOUND', 'RATE_LIMITED'),
    },
  });
  registry.registerPath({
    method: 'delete',
    path: '/api/memory/{id}',
    tags: ['saved memories'],
    security: secured,
    summary: 'Delete a saved memory',
    description: `${about} Another user's item is a 404.`,
    request: { params: itemParams, headers: serviceUser },
    responses: { 204: { description: 'Deleted' }, ...errors('UNAUTHORIZED', 'NOT_FOUND', 'RATE_LIMITED') },
  });
  registry.registerPath({
    method: 'post',
    path: '/api/memory/{id}/approve',
    tags: ['saved memories'],
    security: secured,
    summary: "Approve the model's proposal: from the next call on it is in every pack",
    description: `${about} Approving an active item changes nothing; another user's item is a 404.`,
    request: { params: itemParams, headers: serviceUser },
    responses: {
      200: json(savedMemoryDto, 'The item, now active'),
      ...errors('UNAUTHORIZED', 'NOT_FOUND', 'RATE_LIMITED'),
    },
  });
  registry.registerPath({
    method: 'post',
    path: '/api/memory/{id}/dismiss',
    tags: ['saved memories'],
    security: secured,
    summary: "Dismiss the model's proposal: it is deleted, never having reached a prompt",
    description: `${about} An active item is a 404 here (delete it instead); so is another user's item.`,
    request: { params: itemParams, headers: serviceUser },
    responses: { 204: { description: 'Dismissed' }, ...errors('UNAUTHORIZED', 'NOT_FOUND', 'RATE_LIMITED') },
  });
}

const erases =
  "Everything of the user is erased: threads and forks, messages and their search index, summaries and their revisions, window and pins, model-call records and manifests, tool runs (running ones cancelled; work running elsewhere, an MCP task or an external runner's, is sent its cancel first), saved memories, rate-limit keys, and the jobs naming their threads or tool runs, queued or finished (one running at that moment ends as a no-op); their sockets are disconnected. A tombstone (user id, when) stays: tokens issued before the erasure are refused (401) from then on; a guest never comes back, a host-minted user id only as a new, empty user with a token issued after the erasure.";

/** The caller's account (erase, export) and the admins' erasure of a user (issue 27). */
export function documentAccountRoutes(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: 'delete',
    path: '/api/me',
    tags: ['account'],
    security: secured,
    summary: "Erase the caller's account and everything in it",
    description: `${erases} Counted against EXPORTS_PER_MINUTE with the exports.`,
    responses: { 204: { description: 'Erased' }, ...errors('UNAUTHORIZED', 'RATE_LIMITED') },
  });
  registry.registerPath({
    method: 'get',
    path: '/api/me/export',
    tags: ['account'],
    security: secured,
    summary: 'Export everything of the caller as NDJSON',
    description:
      'One JSON object per line, each with a `type`: `thread` lines are the thread export of GET /api/threads/{id}/export (format `chat-thread-export`: thread, summaryRevisions, messages) on one line with `type` added, one per thread (forks included); then one `saved-memory` line per saved memory (the SavedMemory object); then `{"type":"end","threads":n,"savedMemories":m}`. Streamed: a body without its `end` line was cut. Counted against EXPORTS_PER_MINUTE.',
    responses: {
      200: { description: 'The export', content: { 'application/x-ndjson': { schema: z.string() } } },
      ...errors('UNAUTHORIZED', 'RATE_LIMITED'),
    },
  });
  registry.registerPath({
    method: 'delete',
    path: '/api/admin/users/{userId}',
    tags: ['admin'],
    security: [{ [ADMIN_TOKEN]: [] }, { [ADMIN_SESSION]: [] }],
    summary: 'Erase a user (as DELETE /api/me); audited',
    description: `${erases} The audit trail records who erased whom and when (action \`user.erased\`), no content; the user's older audit rows keep who and when only. A user id with no row is tombstoned all the same.`,
    request: { params: adminUserParams },
    responses: { 204: { description: 'Erased' }, ...errors('VALIDATION', 'UNAUTHORIZED', 'FORBIDDEN') },
  });
}
