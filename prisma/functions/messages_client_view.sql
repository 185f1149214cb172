-- messages_client_view: the function's current text, the source of truth (test/db/sql-functions.int.test.ts holds the
-- migrated database to it). Change it here, then `npm run db:migration -- <name> --function messages_client_view`
-- writes the migration that applies it (migrations already applied are never edited).
CREATE OR REPLACE FUNCTION messages_client_view() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  state record;
BEGIN
  SELECT * INTO state FROM client_view_state(NEW);
  NEW.client_prefix_hash := state.prefix_hash;
  NEW.client_chain := state.chain;
  NEW.client_answer_from := state.answer_from;
  RETURN NEW;
END
$$;
