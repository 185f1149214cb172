-- AlterTable
ALTER TABLE "messages" ADD COLUMN     "search_vector" tsvector;

-- AlterTable
ALTER TABLE "model_calls" ADD COLUMN     "recalled_seqs" INTEGER[] DEFAULT ARRAY[]::INTEGER[];

-- CreateTable
CREATE TABLE "search_settings" (
    "id" INTEGER NOT NULL DEFAULT 1,
    "language" TEXT NOT NULL DEFAULT 'english',

    CONSTRAINT "search_settings_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "messages_search_vector_idx" ON "messages" USING GIN ("search_vector");

-- The deployment's text search configuration (changed by `npm run search:reindex`).
INSERT INTO "search_settings" ("id", "language") VALUES (1, 'english');

-- A message is indexed when it completes, from a bounded prefix of its text (Postgres refuses a tsvector over
-- 1 MB; tool results may be 2 MB). Anything not complete, or forgotten, has no vector. A row inserted with a
-- vector (a copied row) keeps it.
CREATE FUNCTION "messages_search_vector"() RETURNS trigger LANGUAGE plpgsql AS $$
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

CREATE TRIGGER "messages_search_vector_insert" BEFORE INSERT ON "messages"
  FOR EACH ROW WHEN (NEW.search_vector IS NULL AND NEW.status = 'complete')
  EXECUTE FUNCTION "messages_search_vector"();

-- Streaming saves change only the content of a streaming message: no vector work for them.
CREATE TRIGGER "messages_search_vector_update" BEFORE UPDATE OF "status", "content", "deleted_at" ON "messages"
  FOR EACH ROW WHEN (
    (NEW.status = 'complete' AND (OLD.status IS DISTINCT FROM NEW.status OR OLD.content IS DISTINCT FROM NEW.content
      OR OLD.deleted_at IS DISTINCT FROM NEW.deleted_at))
    OR (OLD.search_vector IS NOT NULL AND (NEW.status <> 'complete' OR NEW.deleted_at IS NOT NULL)))
  EXECUTE FUNCTION "messages_search_vector"();

-- Messages stored before this migration.
UPDATE "messages" SET "search_vector" = to_tsvector('english', left("content", 100000))
  WHERE "status" = 'complete' AND "deleted_at" IS NULL;
