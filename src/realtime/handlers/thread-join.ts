import { AppError } from '../../core/errors';
import { toMessageDto, toThreadDto } from '../../core/dto';
import type { TranscriptMessage } from '../../core/domain';
import type { ThreadJoinResult } from '../../shared/socket-events';
import { AtAck, type HandlerContext } from '../acknowledged';
import type { SocketDeps } from '../socket-deps';
import { roomOf } from '../socket-types';
import type { threadJoinPayload } from '../socket-schemas';
import type { z } from 'zod';

/** Newest page size without afterSeq (the REST default). */
const NEWEST_PAGE = 50;
const CATCH_UP_PAGE = 200;
/** A catch-up longer than this answers `hasMoreAfter: true`; the client pages the rest over REST. */
const CATCH_UP_MAX = 2000;

async function catchUp(deps: SocketDeps, threadId: string, afterSeq: number) {
  const messages: TranscriptMessage[] = [];
  let after = afterSeq;
  let hasMoreBefore: boolean | null = null;
  for (;;) {
    const page = await deps.transcript.listMessages({ threadId, after, limit: CATCH_UP_PAGE });
    hasMoreBefore ??= page.hasMoreBefore;
    messages.push(...page.messages);
    const lastSeq = page.messages.findLast((message) => message.seq !== null)?.seq ?? null;
    if (!page.hasMoreAfter || lastSeq === null) return { messages, hasMoreBefore, hasMoreAfter: false };
    if (messages.length >= CATCH_UP_MAX) return { messages, hasMoreBefore, hasMoreAfter: true };
    after = lastSeq;
  }
}

/**
 * `thread-join`: joins the thread's room, then reads the transcript (in that order, so no event falls between
 * the read and the join) and answers with the thread and its messages. A message still streaming carries its
 * text so far, read at the moment of the ack: every delta the client gets after the ack starts at or after it
 * (`flushEvents` first sends the deltas still being coalesced, so none of them reaches the tab after the ack).
 */
export async function threadJoin(deps: SocketDeps & { flushEvents?: (threadId: string) => void }, { socket, userId, payload }: HandlerContext<z.infer<typeof threadJoinPayload>>): Promise<AtAck<ThreadJoinResult>> {
  const thread = await deps.threads.findThread(payload.threadId, userId);
  if (!thread) throw new AppError('NOT_FOUND', 'No such thread.');
  await socket.join(roomOf(thread.id));
  const page = payload.afterSeq !== undefined
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
