-- Fewer round trips per turn (issue 16): the send's ownership check joins the accept, the runner's lease joins the
-- turn's start, and a turn's end joins the step to the next turn (or the lease's release).

-- The accept with the thread's ownership checked under the same row lock (p_owner_id NULL skips the check). Returns
-- {"missing": true} when the thread is not p_owner_id's (or does not exist), else as before: {"queued": n} when
-- n > p_max_queued (nothing stored), else {"queued": n, "message": <row>, "turnCreatedAt": ...}.
DROP FUNCTION chat_accept_user_message(uuid, uuid, uuid, text, int, text, text, int);
CREATE FUNCTION chat_accept_user_message(p_thread_id uuid, p_owner_id text, p_message_id uuid, p_turn_id uuid, p_content text,
  p_tokens int, p_encoding text, p_client_message_id text, p_max_queued int) RETURNS json
LANGUAGE plpgsql AS $$
DECLARE
  queued int;
  message messages;
  turn_created timestamptz;
BEGIN
  PERFORM 1 FROM threads WHERE id = p_thread_id AND (p_owner_id IS NULL OR owner_id = p_owner_id) FOR UPDATE;
  IF NOT FOUND THEN
    RETURN json_build_object('missing', true);
  END IF;
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

-- The runner's step between turns (internal; see chat_next_turn and chat_complete_turn): takes or renews p_owner's lease
-- of the thread (compare-and-set: free, already p_owner's, or expired) and, with p_start, starts the oldest queued turn
-- under it (chat_start_next_turn). When nothing was started it releases the lease in the same transaction. The thread
-- row stays locked from the lease's update to the commit, and an accept locks that row before it queues: a send either
-- committed before this step (its turn is seen and started here) or commits after it (it finds the lease free, and its
-- own kick runs the turn). Returns {"lease": false} when another owner holds a live lease, else {"lease": true,
-- "started": null} (the lease released) or {"lease": true, "started": {"turn": ..., "userMessage": ...}}.
CREATE FUNCTION chat_lease_next_turn(p_thread_id uuid, p_owner text, p_ttl_ms int, p_start boolean) RETURNS json
LANGUAGE plpgsql AS $$
DECLARE
  started json;
BEGIN
  UPDATE threads SET lease_owner = p_owner, lease_expires_at = now() + p_ttl_ms * interval '1 millisecond'
  WHERE id = p_thread_id AND (lease_owner IS NULL OR lease_owner = p_owner OR lease_expires_at < now());
  IF NOT FOUND THEN
    RETURN json_build_object('lease', false);
  END IF;
  IF p_start THEN
    started := chat_start_next_turn(p_thread_id, p_owner);
  END IF;
  IF started IS NULL THEN
    UPDATE threads SET lease_owner = NULL, lease_expires_at = NULL WHERE id = p_thread_id AND lease_owner = p_owner;
  END IF;
  RETURN json_build_object('lease', true, 'started', started);
END $$;

-- The runner's step before a thread's first turn: the lease and the turn's start in one round trip
-- (chat_lease_next_turn). Commits without waiting for the WAL flush, like the steps it joins: a crash can only lose
-- the start, which leaves the turn queued.
CREATE FUNCTION chat_next_turn(p_thread_id uuid, p_owner text, p_ttl_ms int) RETURNS json
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM set_config('synchronous_commit', 'off', true);
  RETURN chat_lease_next_turn(p_thread_id, p_owner, p_ttl_ms, true);
END $$;

-- Ends a turn that completed and takes the runner's next step (chat_lease_next_turn: the next queued turn started, or
-- the lease released), in one transaction. The turn's end waits for the WAL flush: the setting the start of a next
-- turn turns off is put back before the commit. Returns {"turn": <row>, "next": <the step>}, or NULL for an unknown
-- turn (nothing changed).
CREATE FUNCTION chat_complete_turn(p_turn_id uuid, p_thread_id uuid, p_owner text, p_ttl_ms int, p_start boolean) RETURNS json
LANGUAGE plpgsql AS $$
DECLARE
  sync text := current_setting('synchronous_commit');
  turn turns;
  next json;
BEGIN
  UPDATE turns SET status = 'complete', finished_at = now() WHERE id = p_turn_id RETURNING * INTO turn;
  IF NOT FOUND THEN
    RETURN NULL;
  END IF;
  next := chat_lease_next_turn(p_thread_id, p_owner, p_ttl_ms, p_start);
  PERFORM set_config('synchronous_commit', sync, true);
  RETURN json_build_object('turn', to_json(turn), 'next', next);
END $$;
