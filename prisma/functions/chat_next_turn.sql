-- chat_next_turn: the function's current text, the source of truth (test/db/sql-functions.int.test.ts holds the
-- migrated database to it). Change it here, then `npm run db:migration -- <name> --function chat_next_turn`
-- writes the migration that applies it (migrations already applied are never edited).
--
-- The runner's step before a thread's first turn: the lease and the turn's start in one round trip
-- (chat_lease_next_turn). Commits without waiting for the WAL flush, like the steps it joins: a crash can only lose
-- the start, which leaves the turn queued.
CREATE OR REPLACE FUNCTION chat_next_turn(p_thread_id uuid, p_owner text, p_ttl_ms int) RETURNS json
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM set_config('synchronous_commit', 'off', true);
  RETURN chat_lease_next_turn(p_thread_id, p_owner, p_ttl_ms, true);
END $$;
