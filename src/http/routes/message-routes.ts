import { Router, type Request, type Response } from 'express';
import { AppError } from '../../core/errors/app-error';
import { toMessageDto } from '../../core/dto/api-dto';
import { retryAnswer } from '../../core/turn/retry-answer';
import { sendMessage, sendMessageDepsOf } from '../../core/turn/send-message';
import type { TranscriptMessage, Turn } from '../../core/domain/types';
import type { SendMessageResponseDto } from '../../shared/api';
import { principalOf } from '../authenticate';
import type { HttpDeps } from '../http-deps';
import { listMessagesQuery, messageIdParams, parseOrThrow, sendMessageBody, threadIdParams } from '../request-schemas';
import { toAppError } from '../../errors/to-app-error';
import { ownThread } from './thread-routes';
import { turnEnded, untilTurnEnds, waitForTurnEnd } from '../turn-ended';

/** The turn's outcome as the send and retry routes answer it. */
export async function turnResult(
  deps: HttpDeps,
  turnId: string,
  userMessageId: string,
  threadId: string,
): Promise<SendMessageResponseDto> {
  const [turn, userMessage, messages] = await Promise.all([
    deps.turns.findTurn(turnId),
    deps.transcript.findMessage(threadId, userMessageId),
    deps.transcript.listTurnMessages(turnId),
  ]);
  if (!turn || !userMessage) throw new AppError('NOT_FOUND', 'The turn is gone (was the thread deleted?).');
  return {
    userMessage: toMessageDto(userMessage),
    messages: messages.map(toMessageDto),
    turn: {
      id: turn.id,
      status: turn.status,
      error: turn.error ? { code: turn.error.code as never, message: turn.error.message } : null,
    },
  };
}

function writeSse(response: Response, event: string, data: unknown): void {
  response.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
}

/** GET /threads/:id/messages: a page of the thread's messages. */
async function listMessages(deps: HttpDeps, request: Request, response: Response): Promise<void> {
  const thread = await ownThread(deps, request.params.id, principalOf(response).userId);
  const query = parseOrThrow(listMessagesQuery, request.query, 'query');
  const page = await deps.transcript.listMessages({
    threadId: thread.id,
    limit: query.limit,
    ...(query.before !== undefined ? { before: query.before } : {}),
    ...(query.after !== undefined ? { after: query.after } : {}),
  });
  response.json({
    messages: page.messages.map(toMessageDto),
    hasMoreBefore: page.hasMoreBefore,
    hasMoreAfter: page.hasMoreAfter,
  });
}

/** POST /threads/:id/messages: accepts the message, then answers with the turn's outcome as JSON or as an event stream. */
async function postMessage(deps: HttpDeps, request: Request, response: Response): Promise<void> {
  const principal = principalOf(response);
  // The accept checks the thread is the caller's (in the same round trip); only the id's shape is checked here.
  const thread = parseOrThrow(threadIdParams, { id: request.params.id }, 'thread id');
  const body = parseOrThrow(sendMessageBody, request.body, 'message');
  const accepted = await sendMessage(
    { userId: principal.userId, threadId: thread.id, content: body.content, clientMessageId: body.clientMessageId },
    sendMessageDepsOf(deps),
  );
  const wantsStream = (request.headers.accept ?? '').includes('text/event-stream');
  if (wantsStream) return streamAcceptedTurn(deps, { ...accepted, threadId: thread.id }, request, response);
  await waitForTurnEnd(deps, accepted, request, response);
  const result = await turnResult(deps, accepted.turn.id, accepted.message.id, thread.id);
  response.status(accepted.duplicate ? 200 : 201).json(result);
}

/** The accepted turn's events as server-sent events, until its end; a failure to wait is the stream's last event. */
async function streamAcceptedTurn(
  deps: HttpDeps,
  accepted: { threadId: string; turn: Turn; message: TranscriptMessage; duplicate: boolean },
  request: Request,
  response: Response,
): Promise<void> {
  const { threadId } = accepted;
  response
    .status(200)
    .set({ 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache', Connection: 'keep-alive' });
  response.flushHeaders();
  writeSse(response, 'message-accepted', {
    message: toMessageDto(accepted.message),
    turnId: accepted.turn.id,
    duplicate: accepted.duplicate,
  });
  const waiter = turnEnded(deps, accepted.turn, (event) => writeSse(response, event.type, event), {
    fresh: !accepted.duplicate,
  });
  request.on('close', () => waiter.stop());
  try {
    await untilTurnEnds(deps, accepted, waiter);
  } catch (error) {
    // The stream is open (200 sent): the failure is its last event, with the code REST and sockets would give.
    const failure = toAppError(error);
    if (failure.code === 'INTERNAL')
      deps.log.error({ err: error, threadId, turnId: accepted.turn.id }, 'waiting for a streamed turn failed');
    else
      deps.log.warn(
        { err: failure.cause ?? error, threadId, turnId: accepted.turn.id, code: failure.code },
        'waiting for a streamed turn failed',
      );
    writeSse(response, 'turn-error', {
      type: 'turn-error',
      threadId,
      turnId: accepted.turn.id,
      error: { code: failure.code, message: failure.message },
    });
  } finally {
    waiter.stop();
  }
  response.end();
}

/** POST /threads/:id/messages/:messageId/retry: a new answer to the message, as JSON once its turn has ended. */
async function retryMessage(deps: HttpDeps, request: Request, response: Response): Promise<void> {
  const principal = principalOf(response);
  const { id, messageId } = parseOrThrow(messageIdParams, request.params, 'path');
  const thread = await ownThread(deps, id, principal.userId);
  const { turn, message } = await retryAnswer(
    { userId: principal.userId, thread, messageId },
    {
      transcript: deps.transcript,
      turns: deps.turns,
      sendLimiter: deps.sendLimiter,
      maxQueuedTurns: deps.limits.maxQueuedTurns,
    },
  );
  const waiter = turnEnded(deps, turn);
  try {
    await untilTurnEnds(deps, { turn, duplicate: false }, waiter);
  } finally {
    waiter.stop();
  }
  response.status(201).json(await turnResult(deps, turn.id, message.id, thread.id));
}

export function messageRoutes(deps: HttpDeps): Router {
  const router = Router();
  router.get('/threads/:id/messages', (request, response) => listMessages(deps, request, response));
  router.post('/threads/:id/messages', (request, response) => postMessage(deps, request, response));
  router.post('/threads/:id/messages/:messageId/retry', (request, response) => retryMessage(deps, request, response));
  router.post('/threads/:id/cancel', async (request, response) => {
    const thread = await ownThread(deps, request.params.id, principalOf(response).userId);
    response.json({ cancelled: deps.cancelTurn ? await deps.cancelTurn(thread.id) : deps.runner.cancel(thread.id) });
  });
  return router;
}
