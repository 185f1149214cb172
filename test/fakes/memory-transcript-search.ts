import type { ElsewhereMatch, MessageSearchHit, TranscriptMatch, TranscriptSearch } from '../../src/core/ports';
import { toMessage, type MemoryDatabase, type MessageRow } from './memory-database';

/** Text of a match given to the model (the repository's MATCH_MAX_CHARS). */
const MATCH_MAX_CHARS = 8000;

/** The words of a text, lower-cased (the fake neither stems nor drops stop words: Postgres' configuration does). */
export function wordsOf(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
}

/** How many times the query's words occur in the text (0: no match). */
function scoreOf(content: string, terms: Set<string>): number {
  return wordsOf(content).filter((word) => terms.has(word)).length;
}

/** Complete, not superseded, not forgotten, with a seq: what the repository indexes and searches. */
const searchable = (message: MessageRow) =>
  message.status === 'complete' && !message.superseded && !message.deleted && message.seq !== null;

const toMatch = (message: MessageRow, score: number): TranscriptMatch => ({
  messageId: message.id,
  seq: message.seq ?? 0,
  role: message.role,
  content: message.content.slice(0, MATCH_MAX_CHARS),
  createdAt: toMessage(message).createdAt,
  score,
});

/** The [start, end) ranges of the text's words that are query terms. */
function highlightsOf(text: string, terms: Set<string>): { start: number; end: number }[] {
  return [...text.matchAll(/[\p{L}\p{N}]+/gu)]
    .filter((match) => terms.has(match[0].toLowerCase()))
    .map((match) => ({ start: match.index, end: match.index + match[0].length }));
}

/** The thread's own matches of `query` (and of `context`, the text it replies to, at a fraction of the weight). */
export function rankOwnMatches(
  database: MemoryDatabase,
  input: {
    threadId: string;
    query: string;
    context?: string;
    fromSeq: number;
    beforeSeq?: number;
    excludeSeqs?: number[];
    limit: number;
  },
): TranscriptMatch[] {
  const terms = new Set(wordsOf(input.query));
  const contextTerms = new Set(wordsOf(input.context ?? '').filter((word) => !terms.has(word)));
  // The rule of search-sql.ts: the answer's words weigh contextWeight ÷ the number of the message's own terms.
  const contextWeight = 0.3 / Math.max(terms.size, 1);
  return database.messages
    .filter(
      (message) =>
        message.threadId === input.threadId &&
        searchable(message) &&
        (message.seq ?? 0) >= input.fromSeq &&
        (input.beforeSeq === undefined || (message.seq ?? 0) < input.beforeSeq) &&
        !(input.excludeSeqs ?? []).includes(message.seq ?? 0),
    )
    .map((message) =>
      toMatch(message, scoreOf(message.content, terms) + contextWeight * scoreOf(message.content, contextTerms)),
    )
    .filter((match) => match.score > 0)
    .sort((a, b) => b.score - a.score || b.seq - a.seq)
    .slice(0, input.limit);
}

/** The asking thread's fork family: the threads it descends from and everything forked from them. */
function familyOf(database: MemoryDatabase, threadId: string): Set<string> {
  const family = new Set<string>();
  for (let id: string | null | undefined = threadId; id && !family.has(id);) {
    family.add(id);
    id = database.threads.get(id)?.forkedFrom?.threadId;
  }
  for (let grown = true; grown;) {
    grown = false;
    for (const thread of database.threads.values()) {
      const parent = thread.forkedFrom?.threadId;
      if (parent && family.has(parent) && !family.has(thread.id)) {
        family.add(thread.id);
        grown = true;
      }
    }
  }
  return family;
}

/**
 * The matches of `query` in the asking thread's owner's other threads: never another user's, the thread's fork family
 * or a forgotten message (nor a copy of one); a message copied by forks once.
 */
export function rankElsewhereMatches(
  database: MemoryDatabase,
  input: { threadId: string; query: string; limit: number },
): ElsewhereMatch[] {
  const asking = database.threads.get(input.threadId);
  if (!asking) return [];
  const family = familyOf(database, input.threadId);
  const terms = new Set(wordsOf(input.query));
  const originDeleted = (message: MessageRow) =>
    message.originMessageId != null &&
    database.messages.some((row) => row.id === message.originMessageId && row.deleted);
  const candidates = database.messages.filter((message) => {
    const thread = database.threads.get(message.threadId);
    return (
      thread?.ownerId === asking.ownerId &&
      !family.has(thread.id) &&
      searchable(message) &&
      !originDeleted(message) &&
      scoreOf(message.content, terms) > 0
    );
  });
  // A message copied by forks counts once: the original where it is searched, else the oldest copy.
  const byOrigin = new Map<string, MessageRow>();
  for (const message of candidates) {
    const origin = message.originMessageId ?? message.id;
    const kept = byOrigin.get(origin);
    if (!kept || (kept.id !== origin && (message.id === origin || message.createdAt < kept.createdAt)))
      byOrigin.set(origin, message);
  }
  return [...byOrigin.values()]
    .map((message): ElsewhereMatch => ({
      ...toMatch(message, scoreOf(message.content, terms)),
      threadId: message.threadId,
      threadTitle: database.threads.get(message.threadId)?.title ?? '',
    }))
    .sort((a, b) => b.score - a.score || b.createdAt.getTime() - a.createdAt.getTime())
    .slice(0, input.limit);
}

/**
 * TranscriptSearch in memory (test/contracts/transcript-search.contract.ts holds it to the Postgres repository's
 * filters): a message matches when it holds one of the query's words (people's search: every word), scored by how
 * often. The ranking's order is Postgres' BM25 (src/db/search-sql.ts), which this fake does not reproduce.
 */
export function createMemoryTranscriptSearch(database: MemoryDatabase): TranscriptSearch {
  return {
    async searchForModel({ threadId, query, limit, beforeSeq }) {
      const thread = database.threads.get(threadId);
      if (!thread) return [];
      return rankOwnMatches(database, {
        threadId,
        query,
        fromSeq: thread.contextStartSeq,
        limit,
        ...(beforeSeq !== undefined ? { beforeSeq } : {}),
      });
    },

    async searchElsewhere({ threadId, query, limit, defaultScope }) {
      const asking = database.threads.get(threadId);
      if (!asking || (asking.settings.recallScope ?? defaultScope) !== 'user') return [];
      return rankElsewhereMatches(database, { threadId, query, limit });
    },

    async messagesAt({ threadId, seqs }) {
      const thread = database.threads.get(threadId);
      if (!thread) return [];
      return database.messages
        .filter(
          (message) =>
            message.threadId === threadId &&
            searchable(message) &&
            seqs.includes(message.seq ?? 0) &&
            (message.seq ?? 0) >= thread.contextStartSeq,
        )
        .map((message) => toMatch(message, 0))
        .sort((a, b) => a.seq - b.seq);
    },

    async searchForPeople({ ownerId, threadId, query, limit, offset }) {
      // Every word must match (websearch syntax beyond plain words is Postgres').
      const terms = new Set(wordsOf(query));
      const rows = database.messages
        .filter((message) => {
          const thread = database.threads.get(message.threadId);
          if (thread?.ownerId !== ownerId || (threadId !== undefined && message.threadId !== threadId)) return false;
          const words = new Set(wordsOf(message.content));
          return searchable(message) && terms.size > 0 && [...terms].every((term) => words.has(term));
        })
        .map((message) => ({ message, score: scoreOf(message.content, terms) }))
        .sort(
          (a, b) =>
            b.score - a.score ||
            b.message.createdAt.getTime() - a.message.createdAt.getTime() ||
            (a.message.id < b.message.id ? -1 : 1),
        )
        .slice(offset, offset + limit + 1);
      const hits = rows.slice(0, limit).map(({ message }): MessageSearchHit => ({
        threadId: message.threadId,
        threadTitle: database.threads.get(message.threadId)?.title ?? '',
        messageId: message.id,
        seq: message.seq ?? 0,
        role: message.role,
        createdAt: toMessage(message).createdAt,
        snippet: message.content,
        highlights: highlightsOf(message.content, terms),
        forkCopy: message.originMessageId != null,
      }));
      return { hits, hasMore: rows.length > limit };
    },
  };
}
