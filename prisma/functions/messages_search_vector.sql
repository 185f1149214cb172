-- messages_search_vector: the function's current text, the source of truth (test/db/sql-functions.int.test.ts holds the
-- migrated database to it). Change it here, then `npm run db:migration -- <name> --function messages_search_vector`
-- writes the migration that applies it (migrations already applied are never edited).
--
-- A message is indexed when it completes, from a bounded prefix of its text (Postgres refuses a tsvector over
-- 1 MB; tool results may be 2 MB). Anything not complete, or forgotten, has no vector. A row inserted with a
-- vector (a copied row) keeps it.
CREATE OR REPLACE FUNCTION "messages_search_vector"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.status = 'complete' AND NEW.deleted_at IS NULL THEN
    NEW.search_vector := to_tsvector(
      coalesce((SELECT "language" FROM "search_settings" WHERE "id" = 1), 'english')::regconfig,
      left(NEW.content, 100000));
  ELSE
    NEW.search_vector := NULL;
  END IF;
  RETURN NEW;
END
$$;
