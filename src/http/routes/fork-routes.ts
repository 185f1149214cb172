import { Router } from 'express';
import { toThreadDto } from '../../core/dto/api-dto';
import { editMessage, forkThread } from '../../core/fork';
import type { EditMessageResponseDto, ForkListDto } from '../../shared/api';
import { principalOf } from '../authenticate';
import type { HttpDeps } from '../http-deps';
import { editMessageBody, forkThreadBody, messageIdParams, parseOrThrow, threadIdParams } from '../request-schemas';
import { waitForTurnEnd } from '../turn-ended';
import { turnResult } from './message-routes';
import { ownThread } from './thread-routes';

/** Forks (branch a thread at a message), a thread's forks, and edits of sent messages (which fork). */
export function forkRoutes(deps: HttpDeps): Router {
  const router = Router();

  router.post('/threads/:id/fork', async (request, response) => {
    const { id } = parseOrThrow(threadIdParams, { id: request.params.id }, 'thread id');
    const body = parseOrThrow(forkThreadBody, request.body ?? {}, 'fork');
    const fork = await forkThread(
      { userId: principalOf(response).userId, threadId: id, atMessageId: body.atMessageId },
      deps.fork,
    );
    response.status(201).json(toThreadDto(fork));
  });

  router.get('/threads/:id/forks', async (request, response) => {
    const thread = await ownThread(deps, request.params.id, principalOf(response).userId);
    const forks = await deps.fork.forks.listForks(thread.id);
    const body: ForkListDto = {
      forks: forks.map((fork) => ({
        threadId: fork.threadId,
        title: fork.title,
        seq: fork.seq,
        createdAt: fork.createdAt.toISOString(),
      })),
    };
    response.json(body);
  });

  router.post('/threads/:id/messages/:messageId/edit', async (request, response) => {
    const { id, messageId } = parseOrThrow(messageIdParams, request.params, 'path');
    const body = parseOrThrow(editMessageBody, request.body, 'edit');
    const { thread, accepted } = await editMessage(
      {
        userId: principalOf(response).userId,
        threadId: id,
        messageId,
        content: body.content,
        clientMessageId: body.clientMessageId,
      },
      deps.fork,
    );
    await waitForTurnEnd(deps, accepted, request, response);
    const result: EditMessageResponseDto = {
      ...(await turnResult(deps, accepted.turn.id, accepted.message.id, thread.id)),
      thread: toThreadDto(thread),
    };
    response.status(accepted.duplicate ? 200 : 201).json(result);
  });

  return router;
}
