import { AppError } from '../../core/errors/app-error';
import { toMessageDto, toThreadDto } from '../../core/dto/api-dto';
import type { TranscriptMessage } from '../../core/domain/types';
import type { ThreadJoinResult } from '../../shared/socket-events';
import { AtAck, type HandlerContext } from '../acknowledged';
import type { SocketDeps } from '../socket-deps';
import { roomOf } from '../socket-types';
import type { threadJoinPayload } from '../socket-schemas';
import type { z } from 'zod';

/** Newest page size without afterSeq (the REST default). */
const NEWEST_PAGE = 50;
/** Messages read per query of a catch-up (small: a tool message may be megabytes). */
const CATCH_UP_PAGE = 50;
/** A catch-up longer than this answers `hasMoreAfter: true`; the client asks again after the last seq. */
export const CATCH_UP_MAX = 2000;
/**
 * Characters of message text (content and tool-call arguments) one catch-up ack carries at most; past it the ack
 * is cut (`hasMoreAfter: true`) and the client asks again after its last seq. One message larger than this still
 * goes alone, so every ack makes progress.
 */
export const CATCH_UP_MAX_CHARS = 1_000_000;

function sizeOf(message: TranscriptMessage): number {
  return message.content.length + (message.toolCalls ? JSON.stringify(message.toolCalls).length : 0);
}

/**
 * The messages after `afterSeq`, up to CATCH_UP_MAX messages and CATCH_UP_MAX_CHARS characters. The cut falls after a
 * stored message (one with a seq), so asking again after the last seq continues exactly there.
 */
async function catchUp(deps: SocketDeps, threadId: string, afterSeq: number) {
  const messages: TranscriptMessage[] = [];
  let chars = 0;
  let after = afterSeq;
  let hasMoreBefore: boolean | null = null;
  for (;;) {
    const page = await deps.transcript.listMessages({ threadId, after, limit: CATCH_UP_PAGE });
    hasMoreBefore ??= page.hasMoreBefore;
    for (const [index, message] of page.messages.entries()) {
      const size = sizeOf(message);
      const more = index < page.messages.length - 1 || page.hasMoreAfter;
      if (messages.length > 0 && message.seq !== null && chars + size > CATCH_UP_MAX_CHARS)
        return { messages, hasMoreBefore, hasMoreAfter: true };
      messages.push(message);
      chars += size;
      if (messages.length >= CATCH_UP_MAX && message.seq !== null && more)
        return { messages, hasMoreBefore, hasMoreAfter: true };
    }
    const lastSeq = page.messages.findLast((message) => message.seq !== null)?.seq ?? null;
    if (!page.hasMoreAfter || lastSeq === null) return { messages, hasMoreBefore, hasMoreAfter: false };
    after = lastSeq;
  }
}

/**
 * `thread-join`: joins the thread's room, then reads the transcript (in that order, so no event falls between
 * the read and the join) and answers with the thread and its messages. A message still streaming carries its
 * text so far, read at the moment of the ack: every delta the client gets after the ack starts at or after it
 * (`flushEvents` first sends the deltas still being coalesced, so none of them reaches the tab after the ack).
 */
export async function threadJoin(
  deps: SocketDeps & { flushEvents?: (threadId: string) => void },
  { socket, userId, payload }: HandlerContext<z.infer<typeof threadJoinPayload>>,
): Promise<AtAck<ThreadJoinResult>> {
  const thread = await deps.threads.findThread(payload.threadId, userId);
  if (!thread) throw new AppError('NOT_FOUND', 'No such thread.');
  await socket.join(roomOf(thread.id));
  const page =
    payload.afterSeq !== undefined
      ? await catchUp(deps, thread.id, payload.afterSeq)
      : await deps.transcript.listMessages({ threadId: thread.id, limit: NEWEST_PAGE });
  return new AtAck(() => {
    deps.flushEvents?.(thread.id);
    return {
      thread: toThreadDto(thread),
      messages: page.messages.map((message) => {
        const dto = toMessageDto(message);
        if (message.status !== 'streaming') return dto;
        // The turn runs in this process: its text is newer than the row (saved about once a second).
        const partial = deps.runner.partialText(message.id);
        return partial === null ? dto : { ...dto, content: partial };
      }),
      hasMoreBefore: page.hasMoreBefore,
      ...(payload.afterSeq !== undefined ? { hasMoreAfter: page.hasMoreAfter } : {}),
    };
  });
}
