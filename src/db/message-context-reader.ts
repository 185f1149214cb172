import { AppError } from '../core/errors/app-error';
import type { MessageContextReader } from '../core/ports';
import type { MessageContextDto, RoleDto, SeenMessageDto, SeenTokenPartsDto, SeenToolResultDto } from '../shared/api';
import type { Database } from './prisma-client';

interface CallRow {
  model: string;
  created_at: Date;
  estimated_prompt_tokens: number;
  reported_prompt_tokens: number | null;
  reported_completion_tokens: number | null;
  reported_cached_tokens: number | null;
  reported_cache_write_tokens: number | null;
  prompt_divergence: { messageIndex: number; tokensBefore: number } | null;
  overflow_retry: boolean;
  omitted: number;
  summary_revision: number | null;
  pinned_seqs: number[];
  recalled_seqs: number[];
  saved_memory_ids: string[];
  recalled_elsewhere: { threadId: string; seq: number }[] | null;
  window_seqs: number[];
  tool_results: unknown;
  token_parts: unknown;
  prefix_hash: string | null;
  prefix_text: string | null;
  prefix_tokens: number | null;
  summary_text: string | null;
  summary_tokens: number | null;
  summary_from_seq: number | null;
  summary_context_start_seq: number | null;
  summary_through_seq: number | null;
  summary_redacted: boolean | null;
}

interface MessageRow {
  id: string;
  seq: number;
  role: RoleDto;
  content: string;
  forgotten: boolean;
}

interface StoredToolResult {
  seq: number;
  role: 'tool' | 'system';
  toolCallId: string | null;
  content?: string | null;
  tokens: number;
  forgotten?: boolean;
}

function toolResultsOf(value: unknown): StoredToolResult[] {
  return Array.isArray(value) ? (value as StoredToolResult[]) : [];
}

function partsOf(value: unknown): SeenTokenPartsDto | null {
  return value && typeof value === 'object' ? (value as SeenTokenPartsDto) : null;
}

type MessageContext = Omit<MessageContextDto, 'limits'>;

/** The newest chat call that produced `messageId` of `threadId` (in a fork, an answer copied there: the original's). */
async function readCall(db: Database, threadId: string, messageId: string): Promise<CallRow | undefined> {
  const rows = await db.$queryRaw<CallRow[]>`
    SELECT c.model, c.created_at, c.estimated_prompt_tokens, c.reported_prompt_tokens, c.reported_completion_tokens,
      c.reported_cached_tokens, c.reported_cache_write_tokens, c.prompt_divergence,
      c.overflow_retry, c.omitted, c.summary_revision, c.pinned_seqs, c.recalled_seqs, c.saved_memory_ids::text[] AS saved_memory_ids, c.recalled_elsewhere, c.window_seqs, c.tool_results, c.token_parts,
      p.hash AS prefix_hash, p.text AS prefix_text, p.tokens AS prefix_tokens,
      r.text AS summary_text, r.tokens AS summary_tokens, r.from_seq AS summary_from_seq, r.context_start_seq AS summary_context_start_seq, r.through_seq AS summary_through_seq,
      (r.redacted_at IS NOT NULL) AS summary_redacted
    FROM model_calls c
    LEFT JOIN system_prefixes p ON p.hash = c.system_prefix_hash
    -- The revision of the requested thread: a fork has its own copies (a forget there redacts them), so an answer
    -- copied from the parent shows the fork's copy, never the parent's text.
    LEFT JOIN summary_revisions r ON r.thread_id = ${threadId}::uuid AND r.revision = c.summary_revision
    -- An answer copied into a fork was produced in the thread it was first written in: its call is found by the
    -- original's id (its seqs are the same in the fork, whose own messages are read below).
    WHERE c.message_id = (SELECT coalesce(m.origin_message_id, m.id) FROM messages m WHERE m.id = ${messageId}::uuid AND m.thread_id = ${threadId}::uuid)
      AND c.purpose = 'chat'
    ORDER BY c.created_at DESC
    LIMIT 1`;
  return rows[0];
}

/** What the call's manifest names, as the store keeps it now: the thread's messages, saved memories, other chats' titles. */
interface CurrentRows {
  bySeq: Map<number, MessageRow>;
  savedText: Map<string, string>;
  titleOf: Map<string, string>;
}

async function readCurrentRows(db: Database, threadId: string, call: CallRow): Promise<CurrentRows> {
  const seqs = [
    ...new Set([
      ...call.window_seqs,
      ...call.pinned_seqs,
      ...call.recalled_seqs,
      ...toolResultsOf(call.tool_results).map((result) => result.seq),
    ]),
  ];
  const messages =
    seqs.length === 0
      ? []
      : await db.$queryRaw<MessageRow[]>`
    SELECT id, seq, role, content, (deleted_at IS NOT NULL) AS forgotten
    FROM messages WHERE thread_id = ${threadId}::uuid AND seq = ANY(${seqs}::int[])`;
  // Saved memories the pack carried, as they stand now (deleted since: no text).
  const saved =
    call.saved_memory_ids.length === 0
      ? []
      : await db.$queryRaw<{ id: string; text: string }[]>`
    SELECT id::text, text FROM saved_memories WHERE id = ANY(${call.saved_memory_ids}::uuid[])`;
  const elsewhere = call.recalled_elsewhere ?? [];
  const titles =
    elsewhere.length === 0
      ? []
      : await db.$queryRaw<{ id: string; title: string }[]>`
    SELECT id::text, title FROM threads WHERE id = ANY(${[...new Set(elsewhere.map((ref) => ref.threadId))]}::uuid[])`;
  return {
    bySeq: new Map(messages.map((message) => [message.seq, message])),
    savedText: new Map(saved.map((item) => [item.id, item.text])),
    titleOf: new Map(titles.map((row) => [row.id, row.title])),
  };
}

/** The messages the call was given, by place (pinned, recalled, window), and its tool results; a forgotten one without content. */
function seenOf(call: CallRow, bySeq: Map<number, MessageRow>): Pick<MessageContext, 'messages' | 'toolResults'> {
  // A seq with no message left, or a forgotten one, shows as forgotten: nothing of its content is served.
  const forgotten = (seq: number) => bySeq.get(seq)?.forgotten ?? true;
  const seen = (seq: number, place: SeenMessageDto['place']): SeenMessageDto => {
    const message = bySeq.get(seq);
    const gone = forgotten(seq);
    return {
      seq,
      role: message?.role ?? 'user',
      place,
      messageId: message?.id ?? null,
      forgotten: gone,
      content: gone ? null : (message?.content ?? null),
    };
  };
  const toolResults: SeenToolResultDto[] = toolResultsOf(call.tool_results).map((result) => {
    const gone = result.forgotten === true || forgotten(result.seq);
    return {
      seq: result.seq,
      role: result.role,
      toolCallId: result.toolCallId,
      content: gone ? null : (result.content ?? null),
      tokens: result.tokens,
      forgotten: gone,
    };
  });
  return {
    messages: [
      ...call.pinned_seqs.map((seq) => seen(seq, 'pinned')),
      ...call.recalled_seqs.map((seq) => seen(seq, 'recalled')),
      ...call.window_seqs.map((seq) => seen(seq, 'window')),
    ],
    toolResults,
  };
}

/** The call's system prefix (its text only with `systemPromptText`) and summary revision, as the DTO shows them. */
function prefixAndSummaryOf(
  call: CallRow,
  options: { systemPromptText: boolean },
): Pick<MessageContext, 'systemPrefix' | 'summary'> {
  const revision = call.summary_revision ?? 0;
  return {
    systemPrefix:
      call.prefix_hash !== null
        ? {
            hash: call.prefix_hash,
            text: options.systemPromptText ? (call.prefix_text ?? '') : null,
            tokens: call.prefix_tokens ?? 0,
          }
        : null,
    summary:
      revision > 0 && call.summary_tokens !== null
        ? {
            revision,
            text: call.summary_redacted ? null : call.summary_text,
            tokens: call.summary_tokens,
            // What the summary covers, as the memory panel names it: from the context's start, not this fold's.
            fromSeq: Math.max(1, call.summary_context_start_seq ?? call.summary_from_seq ?? 1),
            throughSeq: call.summary_through_seq ?? 0,
            redacted: call.summary_redacted === true,
          }
        : null,
  };
}

export function createMessageContextReader(db: Database): MessageContextReader {
  return {
    async forMessage(threadId, messageId, options) {
      const call = await readCall(db, threadId, messageId);
      if (!call)
        throw new AppError(
          'NOT_FOUND',
          'No model call produced this message (only answers of the assistant have one).',
        );
      const { bySeq, savedText, titleOf } = await readCurrentRows(db, threadId, call);
      const { messages, toolResults } = seenOf(call, bySeq);
      return {
        messageId,
        model: call.model,
        at: call.created_at.toISOString(),
        estimatedPromptTokens: call.estimated_prompt_tokens,
        reportedPromptTokens: call.reported_prompt_tokens,
        reportedCompletionTokens: call.reported_completion_tokens,
        reportedCachedTokens: call.reported_cached_tokens,
        reportedCacheWriteTokens: call.reported_cache_write_tokens,
        promptDivergence: call.prompt_divergence,
        overflowRetry: call.overflow_retry,
        omitted: call.omitted,
        ...prefixAndSummaryOf(call, options),
        windowSeqs: call.window_seqs,
        pinnedSeqs: call.pinned_seqs,
        recalledSeqs: call.recalled_seqs,
        recalledElsewhere: (call.recalled_elsewhere ?? []).map((ref) => ({
          threadId: ref.threadId,
          seq: ref.seq,
          title: titleOf.get(ref.threadId) ?? null,
        })),
        savedMemories: call.saved_memory_ids.map((id) => ({ id, text: savedText.get(id) ?? null })),
        messages,
        toolResults,
        parts: partsOf(call.token_parts),
      };
    },
  };
}
