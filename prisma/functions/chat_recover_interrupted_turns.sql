-- chat_recover_interrupted_turns: the function's current text, the source of truth (test/db/sql-functions.int.test.ts holds the
-- migrated database to it). Change it here, then `npm run db:migration -- <name> --function chat_recover_interrupted_turns`
-- writes the migration that applies it (migrations already applied are never edited).
--
-- The sweeper's step for a thread whose lease expired while a turn ran (its process died mid-answer). Under the
-- thread's row lock, and only while no live lease is held, each running turn ends as an error (p_error: code
-- INTERRUPTED). With p_resume, a turn that is not itself a re-run is queued again, once: a new turn of the same kind
-- and user message takes its place in the queue (the same accept_seq), the answers it wrote so far are superseded and
-- leave the window, as a regenerate's do (a streaming one ends with p_error first), and the tool runs waiting to
-- follow it up follow up the new turn. A turn that is not run again shows p_error in an answer: its streaming message,
-- or an empty error answer appended when it had none. Streaming messages of no running turn end with p_error too
-- (tool runs' messages excepted: the tools worker completes them). Returns {"resumed": [new turn ids], "failed":
-- [ids of the turns that ended]}; nothing changes while a live lease is held.
CREATE OR REPLACE FUNCTION chat_recover_interrupted_turns(p_thread_id uuid, p_resume boolean, p_error jsonb) RETURNS json
LANGUAGE plpgsql AS $$
DECLARE
  turn turns;
  resumed uuid[] := '{}';
  failed uuid[] := '{}';
  new_id uuid;
  seqs int[];
  marked int;
  next_seq int;
BEGIN
  PERFORM 1 FROM threads WHERE id = p_thread_id AND (lease_owner IS NULL OR lease_expires_at < now()) FOR UPDATE;
  IF NOT FOUND THEN
    RETURN json_build_object('resumed', resumed, 'failed', failed);
  END IF;
  FOR turn IN SELECT * FROM turns WHERE thread_id = p_thread_id AND status = 'running' ORDER BY accept_seq, id LOOP
    UPDATE turns SET status = 'error', error = p_error, finished_at = now() WHERE id = turn.id;
    IF p_resume AND turn.resumed_from_turn_id IS NULL THEN
      new_id := gen_random_uuid();
      INSERT INTO turns (id, thread_id, kind, user_message_id, accept_seq, resumed_from_turn_id)
      VALUES (new_id, p_thread_id, turn.kind, turn.user_message_id, turn.accept_seq, turn.id);
      UPDATE tool_runs SET follow_up_turn_id = new_id WHERE follow_up_turn_id = turn.id;
      WITH changed AS (
        UPDATE messages SET superseded = true, pinned = false, updated_at = now(),
          status = CASE WHEN status = 'streaming' AND tool_run_id IS NULL THEN 'error' ELSE status END,
          error = CASE WHEN status = 'streaming' AND tool_run_id IS NULL THEN p_error ELSE error END,
          completed_at = CASE WHEN status = 'streaming' AND tool_run_id IS NULL THEN now() ELSE completed_at END
        WHERE turn_id = turn.id AND role <> 'user' AND NOT superseded AND deleted_at IS NULL
        RETURNING seq
      )
      SELECT coalesce(array_agg(seq) FILTER (WHERE seq IS NOT NULL), '{}') INTO seqs FROM changed;
      IF cardinality(seqs) > 0 THEN
        DELETE FROM context_entries WHERE thread_id = p_thread_id AND seq = ANY (seqs);
        -- The window changed under any fold in flight: its compare-and-set on the version fails and it folds again.
        UPDATE threads SET version = version + 1, updated_at = now() WHERE id = p_thread_id;
      END IF;
      resumed := resumed || new_id;
    ELSE
      UPDATE messages SET status = 'error', error = p_error, completed_at = now(), updated_at = now()
      WHERE turn_id = turn.id AND status = 'streaming' AND tool_run_id IS NULL;
      GET DIAGNOSTICS marked = ROW_COUNT;
      IF marked = 0 THEN
        UPDATE threads SET last_seq = last_seq + 1, last_activity_at = now(), updated_at = now() WHERE id = p_thread_id
        RETURNING last_seq INTO next_seq;
        INSERT INTO messages (id, thread_id, seq, role, content, status, error, tokens, turn_id, completed_at)
        VALUES (gen_random_uuid(), p_thread_id, next_seq, 'assistant', '', 'error', p_error, 0, turn.id, now());
      END IF;
      failed := failed || turn.id;
    END IF;
  END LOOP;
  UPDATE messages SET status = 'error', error = p_error, completed_at = now(), updated_at = now()
  WHERE thread_id = p_thread_id AND status = 'streaming' AND tool_run_id IS NULL;
  RETURN json_build_object('resumed', resumed, 'failed', failed);
END $$;
