-- Fewer round trips per turn (issue 16): the send's ownership check joins the accept, and the runner's lease joins the
-- turn's start.

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

-- The runner's step between turns, in one round trip: takes or renews p_owner's lease of the thread (compare-and-set:
-- free, already p_owner's, or expired) and starts the oldest queued turn under it (chat_start_next_turn). When nothing
-- is queued it releases the lease in the same transaction. The thread row stays locked from the lease's update to the
-- commit, and an accept locks that row before it queues: a send either committed before this call (its turn is seen
-- and started here) or commits after it (it finds the lease free, and its own kick runs the turn). Returns
-- {"lease": false} when another owner holds a live lease, {"lease": true, "started": null} when the queue was empty
-- (the lease released), {"lease": true, "started": {"turn": ..., "userMessage": ...}} otherwise. Commits without
-- waiting for the WAL flush, like the steps it joins.
CREATE FUNCTION chat_next_turn(p_thread_id uuid, p_owner text, p_ttl_ms int) RETURNS json
LANGUAGE plpgsql AS $$
DECLARE
  started json;
BEGIN
  PERFORM set_config('synchronous_commit', 'off', true);
  UPDATE threads SET lease_owner = p_owner, lease_expires_at = now() + p_ttl_ms * interval '1 millisecond'
  WHERE id = p_thread_id AND (lease_owner IS NULL OR lease_owner = p_owner OR lease_expires_at < now());
  IF NOT FOUND THEN
    RETURN json_build_object('lease', false);
  END IF;
  started := chat_start_next_turn(p_thread_id, p_owner);
  IF started IS NULL THEN
    UPDATE threads SET lease_owner = NULL, lease_expires_at = NULL WHERE id = p_thread_id AND lease_owner = p_owner;
  END IF;
  RETURN json_build_object('lease', true, 'started', started);
END $$;
