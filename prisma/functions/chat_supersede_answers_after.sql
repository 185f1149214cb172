-- chat_supersede_answers_after: the function's current text, the source of truth (test/db/sql-functions.int.test.ts holds the
-- migrated database to it). Change it here, then `npm run db:migration -- <name> --function chat_supersede_answers_after`
-- writes the migration that applies it (migrations already applied are never edited).
--
-- Marks the non-user messages after user_seq (the answers being regenerated) superseded and unpinned, and deletes
-- their context entries (pinned ones included), so the model never sees both answers. Returns the ids it marked.
CREATE OR REPLACE FUNCTION chat_supersede_answers_after(p_thread_id uuid, p_user_seq int) RETURNS uuid[]
LANGUAGE plpgsql AS $$
DECLARE
  marked uuid[];
  seqs int[];
BEGIN
  WITH changed AS (
    UPDATE messages SET superseded = true, pinned = false, updated_at = now()
    WHERE thread_id = p_thread_id AND seq > p_user_seq AND role <> 'user' AND NOT superseded AND deleted_at IS NULL
    RETURNING id, seq
  )
  SELECT coalesce(array_agg(id), '{}'), coalesce(array_agg(seq) FILTER (WHERE seq IS NOT NULL), '{}') INTO marked, seqs FROM changed;
  DELETE FROM context_entries WHERE thread_id = p_thread_id AND seq = ANY (seqs);
  RETURN marked;
END $$;
