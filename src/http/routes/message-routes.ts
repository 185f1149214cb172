import { Router, type Request, type Response } from 'express';
import { AppError } from '../../core/errors/app-error';
import { toMessageDto } from '../../core/dto/api-dto';
import { retryAnswer } from '../../core/turn/retry-answer';
import { sendMessage } from '../../core/turn/send-message';
import type { Turn } from '../../core/domain/types';
import type { SendMessageResponseDto } from '../../shared/api';
import type { ThreadEvent } from '../../shared/events';
import { principalOf } from '../authenticate';
import type { HttpDeps } from '../http-deps';
import { listMessagesQuery, messageIdParams, parseOrThrow, sendMessageBody, threadIdParams } from '../request-schemas';
import { toAppError } from '../../errors/to-app-error';
import { ownThread } from './thread-routes';

const ENDED = new Set(['complete', 'error', 'cancelled']);

/**
 * Resolves when the turn has ended (or already had). `fresh`: the caller has just queued the turn and nothing has
 * kicked a runner yet, so it cannot have ended before this subscription and its stored state is not read.
 */
export function turnEnded(
  deps: HttpDeps,
  turn: Turn,
  onEvent?: (event: ThreadEvent) => void,
  options: { fresh?: boolean } = {},
): { done: Promise<void>; stop(): void; readonly ended: boolean } {
  let stop = () => {};
  let ended = false;
  const done = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () =>
        reject(new AppError('PROVIDER_TIMEOUT', 'The answer is taking too long; it will still appear in the thread.')),
      deps.limits.turnTimeoutMs + 15_000,
    );
    const unsubscribe = deps.events.subscribe(turn.threadId, (event) => {
      onEvent?.(event);
      if (event.type === 'turn-end' && event.turnId === turn.id) finish();
    });
    function finish() {
      ended = true;
      clearTimeout(timer);
      unsubscribe();
      resolve();
    }
    stop = () => {
      clearTimeout(timer);
      unsubscribe();
      resolve();
    };
    // The turn may have ended before we subscribed (a repeated clientMessageId).
    if (options.fresh) return;
    deps.turns.findTurn(turn.id).then((current) => {
      if (current && ENDED.has(current.status)) finish();
    }, reject);
  });
  return {
    done,
    stop: () => stop(),
    get ended() {
      return ended;
    },
  };
}

/**
 * Kicks this process' runner and waits for the turn's end. If the runner finished its queue without running our
 * turn (the database failed under it, or another process holds the thread), the turn's stored state decides:
 * an unreachable database surfaces as a retryable UNAVAILABLE; otherwise we keep waiting for whoever runs it.
 */
/** A JSON answer's wait: until the accepted turn ends, or the client goes away. */
export async function waitForTurnEnd(
  deps: HttpDeps,
  accepted: { turn: Turn; duplicate: boolean },
  request: Request,
  response: Response,
): Promise<void> {
  const waiter = turnEnded(deps, accepted.turn, undefined, { fresh: !accepted.duplicate });
  request.on('close', () => {
    if (!response.writableEnded) waiter.stop();
  });
  try {
    await untilTurnEnds(deps, accepted, waiter);
  } finally {
    waiter.stop();
  }
}

async function untilTurnEnds(
  deps: HttpDeps,
  accepted: { turn: Turn; duplicate: boolean },
  waiter: { done: Promise<void>; readonly ended: boolean },
): Promise<void> {
  if (accepted.duplicate) return waiter.done;
  const drained = deps.runner.kick(accepted.turn.threadId).then(async () => {
    if (waiter.ended) return;
    const turn = await deps.turns.findTurn(accepted.turn.id);
    if (turn && ENDED.has(turn.status)) return;
    await waiter.done;
  });
  await Promise.race([waiter.done, drained]);
}

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

export function messageRoutes(deps: HttpDeps): Router {
  const router = Router();

  router.get('/threads/:id/messages', async (request, response) => {
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
  });

  router.post('/threads/:id/messages', async (request, response) => {
    const principal = principalOf(response);
    // The accept checks the thread is the caller's (in the same round trip); only the id's shape is checked here.
    const thread = parseOrThrow(threadIdParams, { id: request.params.id }, 'thread id');
    const body = parseOrThrow(sendMessageBody, request.body, 'message');
    const accepted = await sendMessage(
      { userId: principal.userId, threadId: thread.id, content: body.content, clientMessageId: body.clientMessageId },
      {
        turns: deps.turns,
        settings: deps.settings,
        sendLimiter: deps.sendLimiter,
        maxMessageChars: deps.limits.maxMessageChars,
        maxQueuedTurns: deps.limits.maxQueuedTurns,
        ...(deps.spend ? { spend: deps.spend } : {}),
      },
    );
    const wantsStream = (request.headers.accept ?? '').includes('text/event-stream');
    if (wantsStream) {
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
          deps.log.error(
            { err: error, threadId: thread.id, turnId: accepted.turn.id },
            'waiting for a streamed turn failed',
          );
        else
          deps.log.warn(
            { err: failure.cause ?? error, threadId: thread.id, turnId: accepted.turn.id, code: failure.code },
            'waiting for a streamed turn failed',
          );
        writeSse(response, 'turn-error', {
          type: 'turn-error',
          threadId: thread.id,
          turnId: accepted.turn.id,
          error: { code: failure.code, message: failure.message },
        });
      } finally {
        waiter.stop();
      }
      response.end();
      return;
    }
    await waitForTurnEnd(deps, accepted, request, response);
    const result = await turnResult(deps, accepted.turn.id, accepted.message.id, thread.id);
    response.status(accepted.duplicate ? 200 : 201).json(result);
  });

  router.post('/threads/:id/messages/:messageId/retry', async (request, response) => {
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
  });

  router.post('/threads/:id/cancel', async (request, response) => {
    const thread = await ownThread(deps, request.params.id, principalOf(response).userId);
    response.json({ cancelled: deps.cancelTurn ? await deps.cancelTurn(thread.id) : deps.runner.cancel(thread.id) });
  });

  return router;
}
