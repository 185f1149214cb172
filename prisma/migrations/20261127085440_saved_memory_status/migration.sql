-- AlterTable
ALTER TABLE "saved_memories" ADD COLUMN     "status" TEXT NOT NULL DEFAULT 'active',
ADD COLUMN     "tokens_stale" BOOLEAN NOT NULL DEFAULT false;

-- Existing items are active (they reached prompts before proposals existed) and were counted for the old rendering
-- (`- text`): the app recounts them for the quoted line at start.
UPDATE "saved_memories" SET "tokens_stale" = true;
