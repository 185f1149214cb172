-- chat_complete_turn: the function's current text, the source of truth (test/db/sql-functions.int.test.ts holds the
-- migrated database to it). Change it here, then `npm run db:migration -- <name> --function chat_complete_turn`
-- writes the migration that applies it (migrations already applied are never edited).
--
-- Ends a turn that completed and takes the runner's next step (chat_lease_next_turn: the next queued turn started, or
-- the lease released), in one transaction. The turn's end waits for the WAL flush: the setting the start of a next
-- turn turns off is put back before the commit. Returns {"turn": <row>, "next": <the step>}, or NULL for an unknown
-- turn (nothing changed).
CREATE OR REPLACE FUNCTION chat_complete_turn(p_turn_id uuid, p_thread_id uuid, p_owner text, p_ttl_ms int, p_start boolean) RETURNS json
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
