-- AlterTable
ALTER TABLE "tool_runs" ADD COLUMN     "deadline_at" TIMESTAMPTZ(3),
ADD COLUMN     "polled_at" TIMESTAMPTZ(3),
ADD COLUMN     "remote_cancelled_at" TIMESTAMPTZ(3),
ADD COLUMN     "task_id" TEXT;
