-- The turn's path in one round trip per step (issue 16): a PL/pgSQL function runs each of its statements with a
-- fresh snapshot (VOLATILE, READ COMMITTED), so "lock the thread row, then count" is exact inside one call where a
-- single statement's snapshot would predate the lock. Rows come back as JSON with the table's column names.

-- Marks the non-user messages after user_seq (the answers being regenerated) superseded and unpinned, and deletes
-- their context entries (pinned ones included), so the model never sees both answers. Returns the ids it marked.
CREATE FUNCTION chat_supersede_answers_after(p_thread_id uuid, p_user_seq int) RETURNS uuid[]
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

-- Stores a user message as pending and queues its turn, under the thread's row lock: the count of queued and running
-- turns is taken after the lock, so concurrent sends see each other and the bound is exact. Returns
-- {"queued": n} when n > p_max_queued (nothing stored), else {"queued": n, "message": <row>, "turnCreatedAt": ...}.
CREATE FUNCTION chat_accept_user_message(p_thread_id uuid, p_message_id uuid, p_turn_id uuid, p_content text, p_tokens int,
  p_encoding text, p_client_message_id text, p_max_queued int) RETURNS json
LANGUAGE plpgsql AS $$
DECLARE
  queued int;
  message messages;
  turn_created timestamptz;
BEGIN
  PERFORM 1 FROM threads WHERE id = p_thread_id FOR UPDATE;
  SELECT count(*)::int INTO queued FROM turns WHERE thread_id = p_thread_id AND status IN ('queued', 'running');
  IF queued > p_max_queued THEN
    RETURN json_build_object('queued', queued);
  END IF;
  INSERT INTO messages (id, thread_id, role, content, status, tokens, encoding, client_message_id, turn_id)
  VALUES (p_message_id, p_thread_id, 'user', p_content, 'pending', p_tokens, p_encoding, p_client_message_id, p_turn_id)
  RETURNING * INTO message;
  INSERT INTO turns (id, thread_id, kind, user_message_id) VALUES (p_turn_id, p_thread_id, 'message', p_message_id)
  RETURNING created_at INTO turn_created;
  UPDATE threads SET last_activity_at = now(), updated_at = now() WHERE id = p_thread_id;
  RETURN json_build_object('queued', queued, 'message', to_json(message), 'turnCreatedAt', turn_created);
END $$;

-- Queues a turn with no new user message (a retry, a regenerate) under the thread's row lock: nothing is queued when
-- more than p_max_queued turns are queued or running, or when one for the same user message is. Returns
-- {"active": n, "same": bool, "turn": <row or null>}.
CREATE FUNCTION chat_queue_turn(p_thread_id uuid, p_turn_id uuid, p_kind text, p_user_message_id uuid, p_max_queued int) RETURNS json
LANGUAGE plpgsql AS $$
DECLARE
  active int;
  same boolean;
  turn turns;
BEGIN
  PERFORM 1 FROM threads WHERE id = p_thread_id FOR UPDATE;
  SELECT count(*)::int, coalesce(bool_or(user_message_id IS NOT DISTINCT FROM p_user_message_id), false) INTO active, same
  FROM turns WHERE thread_id = p_thread_id AND status IN ('queued', 'running');
  IF active > p_max_queued OR same THEN
    RETURN json_build_object('active', active, 'same', same, 'turn', NULL);
  END IF;
  INSERT INTO turns (id, thread_id, kind, user_message_id) VALUES (p_turn_id, p_thread_id, p_kind, p_user_message_id)
  RETURNING * INTO turn;
  RETURN json_build_object('active', active, 'same', same, 'turn', to_json(turn));
END $$;

-- Under the lease held by p_owner: starts the thread's oldest queued turn. Its pending user message gets the next
-- seq and joins the window; a message after a fresh context makes that context final (the undo is forgotten, the
-- entries before the context start are deleted with the pins they held); a regenerate supersedes the answers it
-- replaces. Returns {"turn": <row>, "userMessage": <row or null>}, or NULL when the lease is not held or nothing is
-- queued. Commits without waiting for the WAL flush: a crash can only lose the start, which leaves the turn queued.
CREATE FUNCTION chat_start_next_turn(p_thread_id uuid, p_owner text) RETURNS json
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
  SELECT * INTO turn FROM turns WHERE thread_id = p_thread_id AND status = 'queued' ORDER BY created_at, id LIMIT 1;
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
