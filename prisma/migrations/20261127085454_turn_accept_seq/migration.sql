-- Queued turns start in the order they were accepted (issue 33 item 7): created_at is a millisecond timestamp (two
-- sends of one millisecond tie, and the id after it is a random UUID) and the start of the accepting transaction (one
-- that began first can take the thread's lock second). accept_seq is a sequence drawn when the turn's row is inserted,
-- under the thread's row lock for sends. Existing turns are numbered in their old order (created_at, id).
CREATE SEQUENCE "turns_accept_seq_seq";
ALTER TABLE "turns" ADD COLUMN "accept_seq" BIGINT;
UPDATE "turns" t SET "accept_seq" = o.n
FROM (SELECT id, row_number() OVER (ORDER BY created_at, id) AS n FROM "turns") o
WHERE o.id = t.id;
SELECT setval('"turns_accept_seq_seq"', coalesce((SELECT max("accept_seq") FROM "turns"), 0) + 1, false);
ALTER TABLE "turns" ALTER COLUMN "accept_seq" SET DEFAULT nextval('"turns_accept_seq_seq"'),
  ALTER COLUMN "accept_seq" SET NOT NULL;
ALTER SEQUENCE "turns_accept_seq_seq" OWNED BY "turns"."accept_seq";

-- The queue's read: a thread's queued turns in acceptance order (replaces the index on created_at).
DROP INDEX "turns_thread_id_status_created_at_idx";
CREATE INDEX "turns_thread_id_status_accept_seq_idx" ON "turns"("thread_id", "status", "accept_seq");
