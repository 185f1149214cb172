-- Queued turns start in the order they were accepted (issue 33 item 7; migration turn_accept_seq): the one function
-- that picks the next queued turn orders by accept_seq instead of (created_at, id). Its text is otherwise unchanged.

-- Under the lease held by p_owner: starts the thread's queued turn accepted first
-- (accept_seq: created_at's millisecond cannot order two sends). Its pending user message gets the next
-- seq and joins the window; a message after a fresh context makes that context final (the undo is forgotten, the
-- entries before the context start are deleted with the pins they held); a regenerate supersedes the answers it
-- replaces. Returns {"turn": <row>, "userMessage": <row or null>}, or NULL when the lease is not held or nothing is
-- queued. Commits without waiting for the WAL flush: a crash can only lose the start, which leaves the turn queued.
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
