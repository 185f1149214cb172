-- DropForeignKey
ALTER TABLE "model_calls" DROP CONSTRAINT "model_calls_thread_id_fkey";

-- AlterTable
ALTER TABLE "model_calls" ADD COLUMN     "estimated_completion_tokens" INTEGER,
ADD COLUMN     "user_id" TEXT;

-- Backfill: every call of a thread was for the thread's owner.
UPDATE "model_calls" c SET "user_id" = t."owner_id" FROM "threads" t WHERE t."id" = c."thread_id";

-- CreateIndex
CREATE INDEX "model_calls_user_id_created_at_idx" ON "model_calls"("user_id", "created_at");

-- AddForeignKey
ALTER TABLE "model_calls" ADD CONSTRAINT "model_calls_thread_id_fkey" FOREIGN KEY ("thread_id") REFERENCES "threads"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "model_calls" ADD CONSTRAINT "model_calls_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE SET NULL ON UPDATE CASCADE;
