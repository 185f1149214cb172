-- chat_accept_user_message: the function's current text, the source of truth (test/db/sql-functions.int.test.ts holds the
-- migrated database to it). Change it here, then `npm run db:migration -- <name> --function chat_accept_user_message`
-- writes the migration that applies it (migrations already applied are never edited).
--
CREATE OR REPLACE FUNCTION chat_accept_user_message(p_thread_id uuid, p_owner_id text, p_message_id uuid, p_turn_id uuid, p_content text,
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
