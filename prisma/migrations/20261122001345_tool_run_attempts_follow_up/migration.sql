-- AlterTable
ALTER TABLE "tool_runs" ADD COLUMN     "attempts" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN     "follow_up_turn_id" UUID;
