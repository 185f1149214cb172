-- AlterTable
ALTER TABLE "summary_revisions" ADD COLUMN     "context_start_seq" INTEGER NOT NULL DEFAULT 1;

-- AlterTable
ALTER TABLE "threads" ADD COLUMN     "context_reset_undo" JSONB;
