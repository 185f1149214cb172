import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import type { SavedMemoryDto, SavedMemoryListDto } from '../../shared/api';
import { savedMemoryBody } from '../request-schemas';
import { BEARER, errors, json } from './openapi-helpers';

const secured: Record<string, string[]>[] = [{ [BEARER]: [] }];

export const savedMemoryDto = z.strictObject({
  id: z.string().uuid(),
  text: z.string(),
  source: z.strictObject({ threadId: z.string().uuid(), seq: z.number().int() }).nullable()
    .describe('The message that asked the model to remember it (save_memory); null for an item added by hand or whose chat was deleted.'),
  inContext: z.boolean().describe('Whether the packs carry it: false for older items left out over USER_MEMORY_TOKENS (the newest win).'),
  createdAt: z.iso.datetime({ offset: true }),
  updatedAt: z.iso.datetime({ offset: true }),
}).meta({ id: 'SavedMemory' });
export const savedMemoryListDto = z.strictObject({ items: z.array(savedMemoryDto) }).meta({ id: 'SavedMemoryList' });
const itemParams = z.object({ id: z.string().uuid() });

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Assert<T extends true> = T;
export type SavedMemorySchemaAgreement = [
  Assert<Same<z.infer<typeof savedMemoryDto>, SavedMemoryDto>>,
  Assert<Same<z.infer<typeof savedMemoryListDto>, SavedMemoryListDto>>,
];

const about = 'Saved memories are short texts the model gets in every thread of the user, in the leading system message after the system prompt (within USER_MEMORY_TOKENS). Writes count against MEMORY_WRITES_PER_MINUTE.';

/** The caller's saved memories (issue 27). */
export function documentSavedMemoryRoutes(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: 'get', path: '/api/memory', tags: ['saved memories'], security: secured,
    summary: "The caller's saved memories, newest first", description: about,
    responses: { 200: json(savedMemoryListDto, 'The items'), ...errors('UNAUTHORIZED') },
  });
  registry.registerPath({
    method: 'post', path: '/api/memory', tags: ['saved memories'], security: secured,
    summary: 'Save a memory',
    description: `${about} \`text\` is 1 to 1,000 characters once trimmed (VALIDATION names the field); QUOTA_EXCEEDED past MAX_MEMORY_ITEMS (default 200).`,
    request: { body: { content: { 'application/json': { schema: savedMemoryBody } } } },
    responses: { 201: json(savedMemoryDto, 'The new item'), ...errors('VALIDATION', 'UNAUTHORIZED', 'QUOTA_EXCEEDED', 'RATE_LIMITED') },
  });
  registry.registerPath({
    method: 'patch', path: '/api/memory/{id}', tags: ['saved memories'], security: secured,
    summary: "Change a saved memory's text", description: `${about} Another user's item is a 404.`,
    request: { params: itemParams, body: { content: { 'application/json': { schema: savedMemoryBody } } } },
    responses: { 200: json(savedMemoryDto, 'The item'), ...errors('VALIDATION', 'UNAUTHORIZED', 'NOT_FOUND', 'RATE_LIMITED') },
  });
  registry.registerPath({
    method: 'delete', path: '/api/memory/{id}', tags: ['saved memories'], security: secured,
    summary: 'Delete a saved memory', description: `${about} Another user's item is a 404.`,
    request: { params: itemParams },
    responses: { 204: { description: 'Deleted' }, ...errors('UNAUTHORIZED', 'NOT_FOUND', 'RATE_LIMITED') },
  });
}
