-- A turn cut by a crash is answered after the restart (issue 33 item 8): the turn that runs an interrupted one again
-- names it (resumed_from_turn_id), so a re-run that is interrupted too is not run a third time.
ALTER TABLE "turns" ADD COLUMN "resumed_from_turn_id" UUID;
-- A client's resend of a message (its clientMessageId) finds the turn that runs it again.
CREATE INDEX "turns_resumed_from_turn_id_idx" ON "turns"("resumed_from_turn_id");

-- The sweeper's step for a thread whose lease expired while a turn ran (its process died mid-answer). Under the
-- thread's row lock, and only while no live lease is held, each running turn ends as an error (p_error: code
-- INTERRUPTED). With p_resume, a turn that is not itself a re-run is queued again, once: a new turn of the same kind
-- and user message takes its place in the queue (the same accept_seq), the answers it wrote so far are superseded and
-- leave the window, as a regenerate's do (a streaming one ends with p_error first), and the tool runs waiting to
-- follow it up follow up the new turn. A turn that is not run again shows p_error in an answer: its streaming message,
-- or an empty error answer appended when it had none. Streaming messages of no running turn end with p_error too
-- (tool runs' messages excepted: the tools worker completes them). Returns {"resumed": [new turn ids], "failed":
-- [ids of the turns that ended]}; nothing changes while a live lease is held.
CREATE FUNCTION chat_recover_interrupted_turns(p_thread_id uuid, p_resume boolean, p_error jsonb) RETURNS json
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

-- The turn's start waits for the recovery of an interrupted turn (a send's kick can take an expired lease before the
-- sweeper ran): otherwise a later message would take its seq and be answered before the interrupted one.
-- Under the lease held by p_owner: starts the thread's queued turn accepted first
-- (accept_seq: created_at's millisecond cannot order two sends). Its pending user message gets the next
-- seq and joins the window; a message after a fresh context makes that context final (the undo is forgotten, the
-- entries before the context start are deleted with the pins they held); a regenerate supersedes the answers it
-- replaces. Returns {"turn": <row>, "userMessage": <row or null>}, or NULL when the lease is not held, nothing is
-- queued or an interrupted turn is still running. Commits without waiting for the WAL flush: a crash can only lose
-- the start, which leaves the turn queued.
CREATE OR REPLACE FUNCTION chat_start_next_turn(p_thread_id uuid, p_owner text) RETURNS json
LANGUAGE plpgsql AS $$
DECLARE
  turn turns;
  message messages;
  has_message boolean := false;
  next_seq int;
  start_seq int;
  undo jsonb;
BEGIN
  PERFORM set_config('synchronous_commit', 'off', true);
  PERFORM 1 FROM threads WHERE id = p_thread_id AND lease_owner = p_owner;
  IF NOT FOUND THEN
    RETURN NULL;
  END IF;
  -- A turn still running when the lease was taken was cut by its process' death: the sweeper recovers it first
  -- (chat_recover_interrupted_turns), so nothing after it starts before it. The lease is then released.
  PERFORM 1 FROM turns WHERE thread_id = p_thread_id AND status = 'running';
  IF FOUND THEN
    RETURN NULL;
  END IF;
  SELECT * INTO turn FROM turns WHERE thread_id = p_thread_id AND status = 'queued' ORDER BY accept_seq, id LIMIT 1;
  IF NOT FOUND THEN
    RETURN NULL;
  END IF;
  IF turn.user_message_id IS NOT NULL THEN
    SELECT * INTO message FROM messages WHERE id = turn.user_message_id;
    has_message := FOUND;
  END IF;
  IF has_message AND message.seq IS NULL THEN
    UPDATE threads SET last_seq = last_seq + 1, last_activity_at = now(), updated_at = now() WHERE id = p_thread_id
    RETURNING last_seq, context_start_seq, context_reset_undo INTO next_seq, start_seq, undo;
    UPDATE messages SET seq = next_seq, status = 'complete', completed_at = now(), updated_at = now() WHERE id = message.id
    RETURNING * INTO message;
    INSERT INTO context_entries (thread_id, seq, message_id, role, content, tokens, encoding)
    VALUES (p_thread_id, next_seq, message.id, 'user', message.content, message.tokens, coalesce(message.encoding, 'o200k_base'));
    IF undo IS NOT NULL THEN
      DELETE FROM context_entries WHERE thread_id = p_thread_id AND seq < start_seq;
      UPDATE messages SET pinned = false, updated_at = now() WHERE thread_id = p_thread_id AND pinned AND seq < start_seq;
      UPDATE threads SET context_reset_undo = NULL, updated_at = now() WHERE id = p_thread_id;
    END IF;
  END IF;
  -- The answers being replaced leave the window before the new one is generated: the model never sees both.
  IF turn.kind = 'regenerate' AND has_message AND message.seq IS NOT NULL THEN
    PERFORM chat_supersede_answers_after(p_thread_id, message.seq);
  END IF;
  UPDATE turns SET status = 'running', started_at = now() WHERE id = turn.id RETURNING * INTO turn;
  RETURN json_build_object('turn', to_json(turn), 'userMessage', CASE WHEN has_message THEN to_json(message) END);
END $$;
