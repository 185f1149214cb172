-- chat_release_lease: the function's current text, the source of truth (test/db/sql-functions.int.test.ts holds the
-- migrated database to it). Change it here, then `npm run db:migration -- <name> --function chat_release_lease`
-- writes the migration that applies it (migrations already applied are never edited).
--
-- Releases p_owner's lease of the thread and says whether turns are queued after the release, in one round trip.
-- The check is a statement of its own (a fresh snapshot, taken after the release's row lock was granted): a send
-- that committed its turn while the lease was held, whose runner could not take the lease, is seen here, so the
-- releasing runner looks again instead of leaving the turn to the sweeper. Commits without waiting for the WAL flush
-- (a lost release only expires).
CREATE OR REPLACE FUNCTION chat_release_lease(p_thread_id uuid, p_owner text) RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM set_config('synchronous_commit', 'off', true);
  UPDATE threads SET lease_owner = NULL, lease_expires_at = NULL WHERE id = p_thread_id AND lease_owner = p_owner;
  RETURN EXISTS (SELECT 1 FROM turns WHERE thread_id = p_thread_id AND status = 'queued');
END $$;
