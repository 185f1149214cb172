import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import {
  createThreadBody,
  listMessagesQuery,
  listThreadsQuery,
  messageIdParams,
  renameThreadBody,
  searchQuery,
  sendMessageBody,
  threadIdParams,
  toolRunParams,
} from '../request-schemas';
import { BEARER, errors, json } from './openapi-helpers';
import {
  cancelResultDto,
  contextPackDto,
  messageContextDto,
  guestSessionDto,
  healthDto,
  messagePageDto,
  readinessDto,
  searchPageDto,
  sendMessageResponseDto,
  serverInfoDto,
  threadDetailDto,
  threadDto,
  threadPageDto,
  toolRunDto,
} from './response-schemas';

const secured: Record<string, string[]>[] = [{ [BEARER]: [] }];

/** Health, auth, threads, messages and context routes. */
// eslint-disable-next-line max-lines-per-function -- declarative data: the OpenAPI description of the user routes
export function documentUserRoutes(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: 'get',
    path: '/healthz',
    tags: ['health'],
    summary: 'The process is up',
    responses: { 200: json(healthDto, 'Up') },
  });
  registry.registerPath({
    method: 'get',
    path: '/readyz',
    tags: ['health'],
    summary: 'Postgres answers (Redis down means degraded)',
    responses: { 200: json(readinessDto, 'Ready or degraded'), 503: json(readinessDto, 'Postgres is unavailable') },
  });

  registry.registerPath({
    method: 'post',
    path: '/api/auth/guest',
    tags: ['auth'],
    summary: 'A new guest user and its token (GUEST_TOKEN_TTL, default 30 days)',
    responses: { 201: json(guestSessionDto, 'The guest'), ...errors('FORBIDDEN', 'RATE_LIMITED') },
  });
  registry.registerPath({
    method: 'post',
    path: '/api/auth/refresh',
    tags: ['auth'],
    security: secured,
    summary:
      'The next token of a guest session (guest tokens only, even just expired; never past GUEST_MAX_AGE from the first)',
    responses: { 200: json(guestSessionDto, 'The fresh token'), ...errors('UNAUTHORIZED', 'FORBIDDEN') },
  });
  registry.registerPath({
    method: 'get',
    path: '/api/info',
    tags: ['auth'],
    summary: 'The model and the context budget',
    responses: { 200: json(serverInfoDto, 'Server info') },
  });

  registry.registerPath({
    method: 'post',
    path: '/api/threads',
    tags: ['threads'],
    summary: 'Create a thread',
    security: secured,
    request: { body: { required: false, content: { 'application/json': { schema: createThreadBody } } } },
    description: 'QUOTA_EXCEEDED when the user already has MAX_THREADS_PER_USER threads (forks count).',
    responses: { 201: json(threadDto, 'The thread'), ...errors('VALIDATION', 'UNAUTHORIZED', 'QUOTA_EXCEEDED') },
  });
  registry.registerPath({
    method: 'get',
    path: '/api/threads',
    tags: ['threads'],
    summary: 'Own threads, most recent activity first',
    security: secured,
    request: { query: listThreadsQuery },
    responses: { 200: json(threadPageDto, 'A page of threads'), ...errors('VALIDATION', 'UNAUTHORIZED') },
  });
  registry.registerPath({
    method: 'get',
    path: '/api/threads/{id}',
    tags: ['threads'],
    summary: 'A thread with its message count and context state',
    security: secured,
    request: { params: threadIdParams },
    responses: { 200: json(threadDetailDto, 'The thread'), ...errors('VALIDATION', 'UNAUTHORIZED', 'NOT_FOUND') },
  });
  registry.registerPath({
    method: 'patch',
    path: '/api/threads/{id}',
    tags: ['threads'],
    summary: 'Rename a thread',
    security: secured,
    request: { params: threadIdParams, body: { content: { 'application/json': { schema: renameThreadBody } } } },
    responses: { 200: json(threadDto, 'The renamed thread'), ...errors('VALIDATION', 'UNAUTHORIZED', 'NOT_FOUND') },
  });
  registry.registerPath({
    method: 'delete',
    path: '/api/threads/{id}',
    tags: ['threads'],
    summary: 'Delete a thread and all its data',
    description:
      "Stops the thread's turns and its tool work elsewhere and removes its jobs. Its model-call records stay for the admin's costs, without the thread or any of its content.",
    security: secured,
    request: { params: threadIdParams },
    responses: { 204: { description: 'Deleted' }, ...errors('VALIDATION', 'UNAUTHORIZED', 'NOT_FOUND') },
  });

  registry.registerPath({
    method: 'get',
    path: '/api/threads/{id}/messages',
    tags: ['messages'],
    summary: 'A page of the transcript, ascending seq',
    security: secured,
    request: { params: threadIdParams, query: listMessagesQuery },
    responses: { 200: json(messagePageDto, 'Messages'), ...errors('VALIDATION', 'UNAUTHORIZED', 'NOT_FOUND') },
  });
  registry.registerPath({
    method: 'post',
    path: '/api/threads/{id}/messages',
    tags: ['messages'],
    security: secured,
    summary: 'Send a message and run its turn',
    description:
      'Answers when the turn has ended. With `Accept: text/event-stream` the turn streams as server-sent events named like the socket events (message-accepted, message-start, message-delta, message-end, turn-end, ...). A repeated clientMessageId answers 200 with the original turn.',
    request: { params: threadIdParams, body: { content: { 'application/json': { schema: sendMessageBody } } } },
    responses: {
      201: {
        description: "The stored user message and this turn's answers",
        content: {
          'application/json': { schema: sendMessageResponseDto },
          'text/event-stream': { schema: z.string() },
        },
      },
      200: json(sendMessageResponseDto, 'A repeated clientMessageId: the original turn'),
      ...errors('VALIDATION', 'UNAUTHORIZED', 'NOT_FOUND', 'TOO_LARGE', 'BUSY', 'RATE_LIMITED', 'PROVIDER_TIMEOUT'),
    },
  });
  registry.registerPath({
    method: 'post',
    path: '/api/threads/{id}/messages/{messageId}/retry',
    tags: ['messages'],
    security: secured,
    summary: 'Run the turn again for a user message whose answer ended in error',
    description:
      'Spends from the send rate limit (RATE_LIMITED) and respects the queue bound (BUSY) like a send; CONFLICT when the message is already being answered again.',
    request: { params: messageIdParams },
    responses: {
      201: json(sendMessageResponseDto, 'The new answer'),
      ...errors('VALIDATION', 'UNAUTHORIZED', 'NOT_FOUND', 'CONFLICT', 'BUSY', 'RATE_LIMITED'),
    },
  });
  registry.registerPath({
    method: 'post',
    path: '/api/threads/{id}/cancel',
    tags: ['messages'],
    summary: 'Stop the running generation (the partial answer is kept)',
    security: secured,
    request: { params: threadIdParams },
    responses: {
      200: json(
        cancelResultDto,
        'Whether a generation was running (in any server process: the Stop reaches the one running it)',
      ),
      ...errors('VALIDATION', 'UNAUTHORIZED', 'NOT_FOUND'),
    },
  });
  registry.registerPath({
    method: 'get',
    path: '/api/threads/{id}/context',
    tags: ['context'],
    summary: 'Exactly what the next model call would get',
    description:
      "With recall over all of the user's threads (recallScope `user`), its search is counted against SEARCH_PER_MINUTE.",
    security: secured,
    request: { params: threadIdParams },
    responses: {
      200: json(contextPackDto, 'The context pack'),
      ...errors('VALIDATION', 'UNAUTHORIZED', 'NOT_FOUND', 'RATE_LIMITED'),
    },
  });
  registry.registerPath({
    method: 'get',
    path: '/api/threads/{id}/messages/{messageId}/context',
    tags: ['context'],
    security: secured,
    summary: 'What the model was given for one answer ("What the model saw")',
    description:
      'The manifest stored with the answer: the system prefix, the summary revision and its text (null once a forget redacted it), the window and pinned seqs, each tool result as it entered (condensed text included), tokens per part, our estimate and the provider\'s reported figure. A message forgotten since shows as forgotten, without its content. NOT_FOUND for a message no model call produced (a user message). An admin (a JWT with `role: "admin"`) may read any thread.',
    request: { params: messageIdParams },
    responses: {
      200: json(messageContextDto, 'What the model saw'),
      ...errors('VALIDATION', 'UNAUTHORIZED', 'NOT_FOUND'),
    },
  });

  const searchDescription =
    "Full-text search (the deployment's SEARCH_LANGUAGE: stemming, stop words) in websearch syntax: " +
    'every word must match; `"a phrase"`, `-word` and `or` work. Best matches first, 20 a page (limit up to 50; pages end at the ' +
    '1,000th hit). Only complete, live messages: never forgotten ones (tombstones), superseded answers, or messages pending, ' +
    'streaming, errored or cancelled; earlier messages before a fresh context are found (people read them). A query of stop ' +
    'words only finds nothing. Each user has SEARCH_PER_MINUTE searches a minute over both routes (RATE_LIMITED with ' +
    'Retry-After past it; a budget of its own, not the send limit).';
  registry.registerPath({
    method: 'get',
    path: '/api/search',
    tags: ['search'],
    summary: 'Search the messages of all own threads',
    security: secured,
    description: searchDescription,
    request: { query: searchQuery },
    responses: {
      200: json(searchPageDto, 'A page of hits, best first'),
      ...errors('VALIDATION', 'UNAUTHORIZED', 'RATE_LIMITED'),
    },
  });
  registry.registerPath({
    method: 'get',
    path: '/api/threads/{id}/search',
    tags: ['search'],
    summary: 'Search the messages of one own thread',
    security: secured,
    description: searchDescription,
    request: { params: threadIdParams, query: searchQuery },
    responses: {
      200: json(searchPageDto, 'A page of hits, best first'),
      ...errors('VALIDATION', 'UNAUTHORIZED', 'NOT_FOUND', 'RATE_LIMITED'),
    },
  });

  registry.registerPath({
    method: 'get',
    path: '/api/tool-runs/{id}',
    tags: ['tools'],
    summary: 'An async tool run (a preview of its result)',
    security: secured,
    request: { params: toolRunParams },
    responses: { 200: json(toolRunDto, 'The run'), ...errors('VALIDATION', 'UNAUTHORIZED', 'NOT_FOUND') },
  });
  registry.registerPath({
    method: 'post',
    path: '/api/tool-runs/{id}/cancel',
    tags: ['tools'],
    summary: 'Cancel an async tool run',
    security: secured,
    request: { params: toolRunParams },
    responses: {
      202: json(toolRunDto, 'Cancel requested (or done, if it had not started)'),
      ...errors('VALIDATION', 'UNAUTHORIZED', 'NOT_FOUND', 'CONFLICT'),
    },
  });
}
