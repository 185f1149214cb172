import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import {
  exportThreadQuery,
  forgetMessageQuery,
  messageIdParams,
  threadIdParams,
  threadSettingsBody,
} from '../request-schemas';
import { BEARER, errors, json } from './openapi-helpers';
import {
  contextResetResponseDto,
  forgetResponseDto,
  pinResponseDto,
  regenerateResponseDto,
  threadExportDto,
  threadMemorySettingsDto,
} from './response-schemas';

const secured: Record<string, string[]>[] = [{ [BEARER]: [] }];
const adminsToo =
  'An admin (a JWT with `role: "admin"`) may act on any thread; anyone else on their own only (another user\'s thread is a 404).';

function documentPins(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: 'post',
    path: '/api/threads/{id}/messages/{messageId}/pin',
    tags: ['memory'],
    security: secured,
    summary: 'Pin a message: never folded, carried by every context pack after the summary',
    description: `A message of a tool exchange pins the whole exchange. CONFLICT when the message cannot be pinned (waiting, deleted, superseded, unfinished, empty, before the fresh context) or the thread's pinned tokens would pass the cap (\`details\` then names the figures). ${adminsToo}`,
    request: { params: messageIdParams },
    responses: {
      200: json(pinResponseDto, 'The messages whose pin changed'),
      ...errors('VALIDATION', 'UNAUTHORIZED', 'NOT_FOUND', 'CONFLICT'),
    },
  });
  registry.registerPath({
    method: 'delete',
    path: '/api/threads/{id}/messages/{messageId}/pin',
    tags: ['memory'],
    security: secured,
    summary: 'Unpin a message (its whole tool exchange); idempotent',
    description: `The message returns to the window and is folded like any other. ${adminsToo}`,
    request: { params: messageIdParams },
    responses: {
      200: json(pinResponseDto, 'The messages whose pin changed (none if it was not pinned)'),
      ...errors('VALIDATION', 'UNAUTHORIZED', 'NOT_FOUND'),
    },
  });
  registry.registerPath({
    method: 'delete',
    path: '/api/threads/{id}/messages/{messageId}',
    tags: ['memory'],
    security: secured,
    summary: 'Forget a message: its content is erased and a tombstone stays',
    description: `Without \`only=true\`, a user message is forgotten with its answers and an answer with its whole turn; a tool exchange is always forgotten whole. A summary that covered a forgotten message is withdrawn and rebuilt in the background (\`memoryRebuilding\`). CONFLICT while the message waits for its turn or its answer is still being written. A user's forget that rebuilds the summary spends from the send rate limit (RATE_LIMITED, nothing forgotten); one of a message only the window holds never does. ${adminsToo}`,
    request: { params: messageIdParams, query: forgetMessageQuery },
    responses: {
      200: json(forgetResponseDto, 'The tombstones and the thread'),
      ...errors('VALIDATION', 'UNAUTHORIZED', 'NOT_FOUND', 'CONFLICT', 'RATE_LIMITED'),
    },
  });
}

function documentSettings(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: 'get',
    path: '/api/threads/{id}/settings',
    tags: ['memory'],
    security: secured,
    summary: "The thread's memory settings, the deployment defaults and the pinned-token budget",
    description: adminsToo,
    request: { params: threadIdParams },
    responses: {
      200: json(threadMemorySettingsDto, 'The settings'),
      ...errors('VALIDATION', 'UNAUTHORIZED', 'NOT_FOUND'),
    },
  });
  registry.registerPath({
    method: 'patch',
    path: '/api/threads/{id}/settings',
    tags: ['memory'],
    security: secured,
    summary: "Change the thread's memory policies (null restores the deployment default)",
    description: `Absent fields are left as they are. \`trigger\` and \`keep\` take the env's forms (\`tokens=3000\`, \`messages=12\`, ...) and are checked together (VALIDATION names the field). \`recallTokens\` sizes the auto-recall slot (0: off; default RECALL_TOKENS); \`recallScope\` is \`thread\` (auto-recall and search_transcript look in this chat only) or \`user\` (also in the user's other chats, never another user's nor this chat's fork family; default RECALL_SCOPE). Only an admin may set \`summaryPrompt\` (FORBIDDEN otherwise). ${adminsToo}`,
    request: { params: threadIdParams, body: { content: { 'application/json': { schema: threadSettingsBody } } } },
    responses: {
      200: json(threadMemorySettingsDto, 'The settings after the change'),
      ...errors('VALIDATION', 'UNAUTHORIZED', 'FORBIDDEN', 'NOT_FOUND'),
    },
  });
}

function documentContext(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: 'post',
    path: '/api/threads/{id}/context-reset',
    tags: ['memory'],
    security: secured,
    summary: 'Start a fresh context: the model sees nothing before the next message',
    description: `The transcript is kept; the summary, the window and the pins before the marker leave the pack. Undoable until the next message. ${adminsToo}`,
    request: { params: threadIdParams },
    responses: {
      201: json(contextResetResponseDto, 'The new context start'),
      ...errors('VALIDATION', 'UNAUTHORIZED', 'NOT_FOUND'),
    },
  });
  registry.registerPath({
    method: 'delete',
    path: '/api/threads/{id}/context-reset',
    tags: ['memory'],
    security: secured,
    summary: 'Undo the last fresh context (CONFLICT once a message was sent after it)',
    description: adminsToo,
    request: { params: threadIdParams },
    responses: {
      200: json(contextResetResponseDto, 'The restored context start'),
      ...errors('VALIDATION', 'UNAUTHORIZED', 'NOT_FOUND', 'CONFLICT'),
    },
  });
  registry.registerPath({
    method: 'post',
    path: '/api/threads/{id}/regenerate',
    tags: ['memory'],
    security: secured,
    summary: 'Answer the last user message again',
    description: `Its answers stay in the transcript marked superseded and leave the window (the model never sees both); answers when the new turn has ended. BUSY while a turn runs; CONFLICT when there is nothing to answer again or the last message is before the fresh context; a user's regeneration spends from the send rate limit (RATE_LIMITED). ${adminsToo}`,
    request: { params: threadIdParams },
    responses: {
      201: json(regenerateResponseDto, "The new turn's answers and the superseded ones"),
      ...errors('VALIDATION', 'UNAUTHORIZED', 'NOT_FOUND', 'BUSY', 'CONFLICT', 'RATE_LIMITED', 'PROVIDER_TIMEOUT'),
    },
  });
  registry.registerPath({
    method: 'get',
    path: '/api/threads/{id}/export',
    tags: ['memory'],
    security: secured,
    summary: 'Download the thread: settings, every summary revision and the whole transcript',
    description: `Streamed as an attachment, a page of rows at a time (flat memory whatever the thread's size). \`format=json\` (default) is one \`ThreadExport\` object with each revision and each message on its own line; \`format=markdown\` is a readable document. A failure after the status was sent truncates the body. Counted against the caller's EXPORTS_PER_MINUTE. ${adminsToo}`,
    request: { params: threadIdParams, query: exportThreadQuery },
    responses: {
      200: {
        description: 'The export (`Content-Disposition: attachment; filename="thread-<id>.json"` or `.md`)',
        headers: {
          'Content-Disposition': {
            description: 'attachment; filename="thread-<id>.json" (or .md)',
            schema: { type: 'string' },
          },
        },
        content: { 'application/json': { schema: threadExportDto }, 'text/markdown': { schema: z.string() } },
      },
      ...errors('VALIDATION', 'UNAUTHORIZED', 'NOT_FOUND', 'RATE_LIMITED'),
    },
  });
}

/** Memory controls (pins, forget, settings, fresh context, regenerate) and the export. */
export function documentMemoryRoutes(registry: OpenAPIRegistry): void {
  documentPins(registry);
  documentSettings(registry);
  documentContext(registry);
}
