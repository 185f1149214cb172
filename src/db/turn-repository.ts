import { randomUUID } from 'node:crypto';
import { AppError } from '../core/errors';
import type { ThreadContext } from '../core/domain';
import type { TurnStore } from '../core/ports';
import type { Database } from './prisma-client';
import { isUniqueViolation } from './prisma-client';
import { toEntry, toMessage, toThread, toTurn } from './mappers';
import type { Prisma } from './generated/client';

type Tx = Prisma.TransactionClient;

async function loadContextIn(tx: Tx | Database, threadId: string): Promise<ThreadContext | null> {
  const row = await tx.thread.findUnique({ where: { id: threadId } });
  if (!row) return null;
  const thread = toThread(row);
  const entries = await tx.contextEntry.findMany({
    where: { threadId, seq: { gte: thread.contextStartSeq } },
    orderBy: { seq: 'asc' },
  });
  const covered = thread.summary?.coveredThroughSeq ?? 0;
  const pinned = entries.filter((entry) => entry.pinned).map(toEntry);
  const window = entries.filter((entry) => !entry.pinned && entry.seq > covered).map(toEntry);
  return { thread, window, pinned };
}

/** Hands out the thread's next seq; the row lock it takes serializes appends per thread. */
export async function nextSeq(tx: Tx, threadId: string): Promise<number> {
  const row = await tx.thread.update({ where: { id: threadId }, data: { lastSeq: { increment: 1 }, lastActivityAt: new Date() }, select: { lastSeq: true } });
  return row.lastSeq;
}

export function createTurnRepository(db: Database): TurnStore {
  return {
    async acceptUserMessage({ threadId, content, tokens, encoding, clientMessageId, maxQueued }) {
      const existing = async () => {
        if (!clientMessageId) return null;
        const message = await db.message.findUnique({ where: { threadId_clientMessageId: { threadId, clientMessageId } } });
        if (!message?.turnId) return null;
        const turn = await db.turn.findUnique({ where: { id: message.turnId } });
        return turn ? { message: toMessage(message), turn: toTurn(turn), duplicate: true } : null;
      };
      const seen = await existing();
      if (seen) return seen;
      try {
        return await db.$transaction(async (tx) => {
          // Lock the thread row so the queue bound holds under concurrent sends.
          await tx.$executeRaw`SELECT 1 FROM threads WHERE id = ${threadId}::uuid FOR UPDATE`;
          const queued = await tx.turn.count({ where: { threadId, status: { in: ['queued', 'running'] } } });
          if (queued > maxQueued) {
            throw new AppError('BUSY', `This thread already has ${queued - 1} message(s) waiting; try again when the current answer is done.`);
          }
          const messageId = randomUUID();
          const turnId = randomUUID();
          const message = await tx.message.create({
            data: { id: messageId, threadId, role: 'user', content, status: 'pending', tokens, encoding, clientMessageId, turnId },
          });
          const turn = await tx.turn.create({ data: { id: turnId, threadId, kind: 'message', userMessageId: messageId } });
          await tx.thread.update({ where: { id: threadId }, data: { lastActivityAt: new Date() } });
          return { message: toMessage(message), turn: toTurn(turn), duplicate: false };
        });
      } catch (error) {
        if (isUniqueViolation(error)) {
          const raced = await existing();
          if (raced) return raced;
        }
        throw error;
      }
    },

    async queueTurn({ threadId, kind, userMessageId }) {
      return toTurn(await db.turn.create({ data: { threadId, kind, userMessageId } }));
    },

    async findTurn(turnId) {
      const row = await db.turn.findUnique({ where: { id: turnId } });
      return row ? toTurn(row) : null;
    },

    async acquireLease({ threadId, owner, ttlMs }) {
      const taken = await db.$executeRaw`
        UPDATE threads SET lease_owner = ${owner}, lease_expires_at = now() + ${ttlMs} * interval '1 millisecond'
        WHERE id = ${threadId}::uuid AND (lease_owner IS NULL OR lease_owner = ${owner} OR lease_expires_at < now())`;
      return taken === 1;
    },

    async releaseLease({ threadId, owner }) {
      await db.$executeRaw`UPDATE threads SET lease_owner = NULL, lease_expires_at = NULL WHERE id = ${threadId}::uuid AND lease_owner = ${owner}`;
    },

    async startNextTurn({ threadId, owner }) {
      return db.$transaction(async (tx) => {
        const held = await tx.thread.count({ where: { id: threadId, leaseOwner: owner } });
        if (held === 0) return null;
        const next = await tx.turn.findFirst({ where: { threadId, status: 'queued' }, orderBy: { createdAt: 'asc' } });
        if (!next) return null;
        let userMessage = next.userMessageId ? await tx.message.findUnique({ where: { id: next.userMessageId } }) : null;
        if (userMessage && userMessage.seq === null) {
          const seq = await nextSeq(tx, threadId);
          userMessage = await tx.message.update({ where: { id: userMessage.id }, data: { seq, status: 'complete', completedAt: new Date() } });
          await tx.contextEntry.create({
            data: { threadId, seq, messageId: userMessage.id, role: 'user', content: userMessage.content, tokens: userMessage.tokens, encoding: userMessage.encoding ?? 'o200k_base' },
          });
        }
        const turn = await tx.turn.update({ where: { id: next.id }, data: { status: 'running', startedAt: new Date() } });
        const context = await loadContextIn(tx, threadId);
        if (!context) return null;
        return { turn: toTurn(turn), userMessage: userMessage ? toMessage(userMessage) : null, context };
      });
    },

    loadContext: (threadId) => loadContextIn(db, threadId),

    async appendTurnMessage({ threadId, turnId, role, content, status, toolCalls, toolCallId, toolRunId }) {
      return db.$transaction(async (tx) => {
        const seq = await nextSeq(tx, threadId);
        const row = await tx.message.create({
          data: {
            threadId, seq, role, content, status, turnId,
            ...(toolCalls ? { toolCalls: toolCalls as unknown as Prisma.InputJsonValue } : {}),
            ...(toolCallId ? { toolCallId } : {}),
            ...(toolRunId ? { toolRunId } : {}),
          },
        });
        return toMessage(row);
      });
    },

    async saveStreamingText(messageId, content) {
      await db.message.updateMany({ where: { id: messageId, status: 'streaming' }, data: { content } });
    },

    async finishMessage({ messageId, content, status, error, toolCalls, tokens, encoding, entry }) {
      return db.$transaction(async (tx) => {
        const row = await tx.message.update({
          where: { id: messageId },
          data: {
            content, status, tokens, encoding, completedAt: new Date(),
            ...(error ? { error } : {}),
            ...(toolCalls ? { toolCalls: toolCalls as unknown as Prisma.InputJsonValue } : {}),
          },
        });
        if (entry && row.seq !== null) {
          await tx.contextEntry.create({
            data: {
              threadId: row.threadId, seq: row.seq, messageId: row.id, role: entry.role, content: entry.content,
              tokens: entry.tokens, encoding,
              ...(entry.toolCalls ? { toolCalls: entry.toolCalls as unknown as Prisma.InputJsonValue } : {}),
              ...(entry.toolCallId ? { toolCallId: entry.toolCallId } : {}),
            },
          });
        }
        return toMessage(row);
      });
    },

    async finishTurn({ turnId, status, error }) {
      const row = await db.turn.update({ where: { id: turnId }, data: { status, finishedAt: new Date(), ...(error ? { error } : {}) } });
      return toTurn(row);
    },

    async hasQueuedTurns(threadId) {
      return (await db.turn.count({ where: { threadId, status: 'queued' }, take: 1 })) > 0;
    },

    async threadsWithStrandedTurns(limit) {
      const rows = await db.$queryRaw<{ id: string }[]>`
        SELECT DISTINCT t.id FROM threads t JOIN turns q ON q.thread_id = t.id
        WHERE q.status IN ('queued', 'running') AND (t.lease_owner IS NULL OR t.lease_expires_at < now())
        LIMIT ${limit}`;
      return rows.map((row) => row.id);
    },

    async failInterruptedTurns(threadId) {
      const error = { code: 'INTERNAL', message: 'The server running this answer stopped; the answer was interrupted.' };
      await db.$transaction([
        // A tool run's message streams independently of turns (the tools worker completes it).
        db.message.updateMany({ where: { threadId, status: 'streaming', toolRunId: null }, data: { status: 'error', error, completedAt: new Date() } }),
        db.turn.updateMany({ where: { threadId, status: 'running' }, data: { status: 'error', error, finishedAt: new Date() } }),
      ]);
    },
  };
}
