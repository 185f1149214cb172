-- chat_queue_turn: the function's current text, the source of truth (test/db/sql-functions.int.test.ts holds the
-- migrated database to it). Change it here, then `npm run db:migration -- <name> --function chat_queue_turn`
-- writes the migration that applies it (migrations already applied are never edited).
--
-- Queues a turn with no new user message (a retry, a regenerate) under the thread's row lock: nothing is queued when
-- more than p_max_queued turns are queued or running, or when one for the same user message is. Returns
-- {"active": n, "same": bool, "turn": <row or null>}.
CREATE OR REPLACE FUNCTION chat_queue_turn(p_thread_id uuid, p_turn_id uuid, p_kind text, p_user_message_id uuid, p_max_queued int) RETURNS json
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
