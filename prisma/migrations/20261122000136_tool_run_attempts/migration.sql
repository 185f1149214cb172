-- AlterTable
ALTER TABLE "tool_runs" ADD COLUMN     "attempts" INTEGER NOT NULL DEFAULT 0;
