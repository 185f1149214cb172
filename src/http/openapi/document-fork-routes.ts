import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import type { EditMessageResponseDto, ForkListDto } from '../../shared/api';
import { editMessageBody, forkThreadBody, messageIdParams, threadIdParams } from '../request-schemas';
import { BEARER, errors, json } from './openapi-helpers';
import { sendMessageResponseDto, threadDto } from './response-schemas';

const secured: Record<string, string[]>[] = [{ [BEARER]: [] }];

export const forkListDto = z
  .strictObject({
    forks: z.array(
      z.strictObject({
        threadId: z.string().uuid(),
        title: z.string(),
        seq: z.number().int().describe("The parent's last seq the fork copied"),
        createdAt: z.iso.datetime({ offset: true }),
      }),
    ),
  })
  .meta({ id: 'ForkList' });

export const editMessageResponseDto = z
  .strictObject({
    ...sendMessageResponseDto.shape,
    thread: threadDto.describe('The fork that holds the edited message; the original thread keeps the original.'),
  })
  .meta({ id: 'EditMessageResponse' });

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Assert<T extends true> = T;
export type ForkSchemaAgreement = [
  Assert<Same<z.infer<typeof forkListDto>, ForkListDto>>,
  Assert<Same<z.infer<typeof editMessageResponseDto>, EditMessageResponseDto>>,
];

/** Forks (branches) and edits. */
export function documentForkRoutes(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: 'post',
    path: '/api/threads/{id}/fork',
    tags: ['threads'],
    security: secured,
    summary: 'Branch a thread at one of its messages into a new thread',
    description:
      'The fork (owned by the same user, titled after the parent, `forkedFrom` naming the parent and the last seq copied) ' +
      "holds the transcript through that message; its summary is the parent's latest revision that covers nothing after it and " +
      "was not redacted (or none); its window the parent's messages after that revision through the fork point, with their stored " +
      "token counts; its pins the parent's pins at or before it; its settings the parent's. A message of a tool exchange forks at " +
      'the end of the exchange. Afterwards the two threads are independent. CONFLICT for a message still waiting for its turn, BUSY ' +
      'while an answer at or before the fork point is still being written. Each user may fork FORKS_PER_MINUTE times a minute ' +
      '(RATE_LIMITED with Retry-After past it, counted across processes); a fork point past FORK_MAX_MESSAGES answers TOO_LARGE.',
    request: { params: threadIdParams, body: { content: { 'application/json': { schema: forkThreadBody } } } },
    responses: {
      201: json(threadDto, 'The fork'),
      ...errors('VALIDATION', 'UNAUTHORIZED', 'NOT_FOUND', 'BUSY', 'CONFLICT', 'TOO_LARGE', 'RATE_LIMITED'),
    },
  });
  registry.registerPath({
    method: 'get',
    path: '/api/threads/{id}/forks',
    tags: ['threads'],
    security: secured,
    summary: 'The forks of a thread, by fork point',
    request: { params: threadIdParams },
    responses: { 200: json(forkListDto, 'The forks'), ...errors('VALIDATION', 'UNAUTHORIZED', 'NOT_FOUND') },
  });
  registry.registerPath({
    method: 'post',
    path: '/api/threads/{id}/messages/{messageId}/edit',
    tags: ['messages'],
    security: secured,
    summary: 'Edit a sent user message: fork just before it and send the new text there',
    description:
      'The original thread is left as it is. The fork is answered like a send (same rate limit, checks and queue bound); ' +
      "the response comes when its turn has ended. A repeated `clientMessageId` answers with the first edit's fork and turn (200). " +
      'An edit that would fork past FORK_MAX_MESSAGES answers TOO_LARGE.',
    request: { params: messageIdParams, body: { content: { 'application/json': { schema: editMessageBody } } } },
    responses: {
      201: json(editMessageResponseDto, "The fork and the turn's outcome"),
      200: json(editMessageResponseDto, 'A repeated clientMessageId'),
      ...errors('VALIDATION', 'UNAUTHORIZED', 'NOT_FOUND', 'BUSY', 'CONFLICT', 'TOO_LARGE', 'RATE_LIMITED'),
    },
  });
}
