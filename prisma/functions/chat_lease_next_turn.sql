-- chat_lease_next_turn: the function's current text, the source of truth (test/db/sql-functions.int.test.ts holds the
-- migrated database to it). Change it here, then `npm run db:migration -- <name> --function chat_lease_next_turn`
-- writes the migration that applies it (migrations already applied are never edited).
--
-- The runner's step between turns (internal; see chat_next_turn and chat_complete_turn): takes or renews p_owner's lease
-- of the thread (compare-and-set: free, already p_owner's, or expired) and, with p_start, starts the oldest queued turn
-- under it (chat_start_next_turn). When nothing was started it releases the lease in the same transaction. The thread
-- row stays locked from the lease's update to the commit, and an accept locks that row before it queues: a send either
-- committed before this step (its turn is seen and started here) or commits after it (it finds the lease free, and its
-- own kick runs the turn). Returns {"lease": false} when another owner holds a live lease, else {"lease": true,
-- "started": null} (the lease released) or {"lease": true, "started": {"turn": ..., "userMessage": ...}}.
CREATE OR REPLACE FUNCTION chat_lease_next_turn(p_thread_id uuid, p_owner text, p_ttl_ms int, p_start boolean) RETURNS json
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
