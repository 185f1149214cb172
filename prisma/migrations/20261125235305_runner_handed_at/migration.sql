-- AlterTable
ALTER TABLE "tool_runs" ADD COLUMN     "handed_at" TIMESTAMPTZ(3);

-- Runs handed over before this migration were sent before their task id was stored: they count as acknowledged
-- (a retry must not send them again).
UPDATE "tool_runs" SET "handed_at" = coalesce("polled_at", "started_at", now()) WHERE "task_id" IS NOT NULL;
