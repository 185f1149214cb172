-- AlterTable
ALTER TABLE "messages" ADD COLUMN     "origin_message_id" UUID;

-- AlterTable
ALTER TABLE "threads" ADD COLUMN     "forked_from_seq" INTEGER,
ADD COLUMN     "forked_from_thread_id" UUID;

-- AlterTable
ALTER TABLE "tool_runs" ADD COLUMN     "origin_run_id" UUID;

-- CreateIndex
CREATE INDEX "messages_origin_message_id_idx" ON "messages"("origin_message_id");

-- CreateIndex
CREATE INDEX "threads_forked_from_thread_id_idx" ON "threads"("forked_from_thread_id");

-- CreateIndex
CREATE INDEX "tool_runs_origin_run_id_idx" ON "tool_runs"("origin_run_id");

-- AddForeignKey
ALTER TABLE "threads" ADD CONSTRAINT "threads_forked_from_thread_id_fkey" FOREIGN KEY ("forked_from_thread_id") REFERENCES "threads"("id") ON DELETE SET NULL ON UPDATE CASCADE;
