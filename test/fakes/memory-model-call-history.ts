import { AppError } from '../../src/core/errors/app-error';
import type { ChatCallRecord, ModelCallHistory } from '../../src/core/ports';
import type { ModelCallPointDto } from '../../src/shared/api';
import type { CallRow, MemoryDatabase } from './memory-database';

/** The fake's cursor: the id of the oldest call of the page (opaque to clients, as the adapter's keyset cursor is). */
const encodeCursor = (call: CallRow) => Buffer.from(`call|${call.id}`).toString('base64url');

function decodeCursor(cursor: string): string {
  const [tag, id, ...rest] = Buffer.from(cursor, 'base64url').toString().split('|');
  if (tag !== 'call' || !id || rest.length > 0) {
    throw new AppError('VALIDATION', 'Invalid cursor: pass the nextCursor of the previous page unchanged.');
  }
  return id;
}

/**
 * Where each call of the thread stands on its transcript: messages (with a seq, at their completion) and calls (a
 * chat call at its answer's start, others when stored) on one time line, messages first at the same instant.
 */
function transcriptAt(database: MemoryDatabase, threadId: string): Map<string, { tokens: number; seq: number }> {
  const messages = database.messages.filter((m) => m.threadId === threadId && m.seq !== null);
  const byId = new Map(database.messages.map((m) => [m.id, m]));
  const timeline = [
    ...messages.map((m) => ({
      at: (m.completedAt ?? m.createdAt).getTime(),
      kind: 0,
      tokens: m.tokens,
      seq: m.seq ?? 0,
      id: '',
    })),
    ...database.calls
      .filter((call) => call.threadId === threadId)
      .map((call) => {
        const answer = call.messageId === null ? undefined : byId.get(call.messageId);
        return { at: (answer?.createdAt ?? call.createdAt).getTime(), kind: 1, tokens: 0, seq: 0, id: call.id };
      }),
  ].sort((a, b) => a.at - b.at || a.kind - b.kind);
  const positions = new Map<string, { tokens: number; seq: number }>();
  let tokens = 0;
  let seq = 0;
  for (const point of timeline) {
    tokens += point.tokens;
    seq = Math.max(seq, point.seq);
    if (point.kind === 1) positions.set(point.id, { tokens, seq });
  }
  return positions;
}

function toPoint(call: CallRow, at: { tokens: number; seq: number } | undefined): ModelCallPointDto {
  const reported = call.reportedPromptTokens !== null && call.reportedPromptTokens > 0;
  const parts = (call as Partial<ChatCallRecord>).manifest?.parts;
  return {
    id: call.id,
    at: call.createdAt.toISOString(),
    purpose: call.purpose,
    model: call.model,
    messageId: call.messageId,
    promptTokens: reported ? (call.reportedPromptTokens ?? 0) : call.estimatedPromptTokens,
    promptTokensSource: reported ? 'provider' : 'estimate',
    estimatedPromptTokens: call.estimatedPromptTokens,
    transcriptTokens: at?.tokens ?? 0,
    throughSeq: at?.seq ?? 0,
    reportedCachedTokens: call.reportedCachedTokens ?? null,
    reportedCacheWriteTokens: call.reportedCacheWriteTokens ?? null,
    toolSchemaTokens: parts?.toolSchemas ?? null,
  };
}

/** ModelCallHistory over the fake's call rows, as src/db/model-call-history.ts reads model_calls (newest first, by storage order). */
export function createMemoryModelCallHistory(database: MemoryDatabase): ModelCallHistory {
  return {
    async listForThread({ threadId, before, limit }) {
      const newestFirst = database.calls.filter((call) => call.threadId === threadId).reverse();
      let from = 0;
      if (before) {
        const id = decodeCursor(before);
        from = newestFirst.findIndex((call) => call.id === id) + 1;
        if (from === 0) throw new AppError('VALIDATION', 'Invalid cursor: no such call.');
      }
      const rows = newestFirst.slice(from, from + limit + 1);
      const page = rows.slice(0, limit);
      const oldest = page.at(-1);
      const positions = transcriptAt(database, threadId);
      return {
        calls: page.reverse().map((call) => toPoint(call, positions.get(call.id))),
        nextCursor: rows.length > limit && oldest ? encodeCursor(oldest) : null,
      };
    },

    async recentPromptCounts({ model, limit }) {
      const counted = database.calls.filter(
        (call) =>
          call.model === model &&
          call.purpose === 'chat' &&
          (call.reportedPromptTokens ?? 0) > 0 &&
          (call.error ?? null) === null,
      );
      return counted.slice(Math.max(0, counted.length - limit)).map((call) => ({
        estimated: call.estimatedPromptTokens,
        reported: call.reportedPromptTokens ?? 0,
        ownerId: call.userId ?? null,
      }));
    },
  };
}
