import { Prisma } from './generated/client';

/**
 * Keeps the model-call rows of threads about to be deleted, so the costs of earlier days never shrink (issue 33): the
 * figures the cost report reads stay (model, time, tokens; the answer's counted tokens are copied from its message,
 * which goes with the thread), and everything of the conversation goes: thread and message ids, tool results, error
 * text, system prefix (it may hold a client's instructions), saved memories and recalls, prompt fingerprints.
 * `anonymise` (erasure, RETENTION_DAYS) drops the user too; a thread deleted by its user keeps its calls' user, so
 * the costs by user stay whole. Run it in the transaction that deletes the threads, after locking them: a call row
 * written meanwhile waits for the lock and then finds its thread gone.
 */
export function keepModelCallsOf(threadIds: readonly string[], options: { anonymise: boolean }): Prisma.Sql {
  return Prisma.sql`
    UPDATE model_calls c SET
      estimated_completion_tokens = coalesce((SELECT m.tokens FROM messages m WHERE m.id = c.message_id), c.estimated_completion_tokens),
      thread_id = NULL, message_id = NULL,
      user_id = CASE WHEN ${options.anonymise}::boolean THEN NULL ELSE c.user_id END,
      error = CASE WHEN c.error IS NULL THEN NULL ELSE 'failed (the text went with the thread)' END,
      tool_results = NULL, system_prefix_hash = NULL, saved_memory_ids = '{}', recalled_elsewhere = NULL, recall_note = NULL,
      prompt_fingerprints = '{}', tools_fingerprint = NULL
    WHERE c.thread_id = ANY(${threadIds as string[]}::uuid[])`;
}
