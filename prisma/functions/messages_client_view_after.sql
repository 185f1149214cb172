-- messages_client_view_after: the function's current text, the source of truth (test/db/sql-functions.int.test.ts holds the
-- migrated database to it). Change it here, then `npm run db:migration -- <name> --function messages_client_view_after`
-- writes the migration that applies it (migrations already applied are never edited).
--
-- After a message's state changed (it completed, or was forgotten or superseded), the messages after it follow, up to
-- the first whose state stays the same and that leaves no answer open (on a normal append: none). Inside an open
-- answer an unchanged message does not stop it: the answer's later parts hash the texts of its earlier ones (a middle
-- part forgotten leaves the server tool's result after it as it was, not the answer's last part).
CREATE OR REPLACE FUNCTION messages_client_view_after() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  following messages;
  state record;
  at integer := NEW.seq;
BEGIN
  LOOP
    SELECT * INTO following FROM messages WHERE thread_id = NEW.thread_id AND seq > at ORDER BY seq LIMIT 1;
    EXIT WHEN NOT FOUND;
    SELECT * INTO state FROM client_view_state(following);
    IF (state.prefix_hash, state.chain, state.answer_from)
      IS NOT DISTINCT FROM (following.client_prefix_hash, following.client_chain, following.client_answer_from) THEN
      EXIT WHEN state.answer_from IS NULL OR state.prefix_hash IS NOT DISTINCT FROM state.chain;
    ELSE
      UPDATE messages SET client_prefix_hash = state.prefix_hash, client_chain = state.chain,
        client_answer_from = state.answer_from
        WHERE id = following.id;
    END IF;
    at := following.seq;
  END LOOP;
  RETURN NULL;
END
$$;
