-- AlterTable
ALTER TABLE "model_calls" ADD COLUMN     "recalled_elsewhere" JSONB,
ADD COLUMN     "saved_memory_ids" UUID[] DEFAULT ARRAY[]::UUID[];

-- CreateTable
CREATE TABLE "saved_memories" (
    "id" UUID NOT NULL,
    "user_id" TEXT NOT NULL,
    "text" TEXT NOT NULL,
    "tokens" INTEGER NOT NULL,
    "source_thread_id" UUID,
    "source_seq" INTEGER,
    "source_message_id" UUID,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "saved_memories_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "erased_users" (
    "user_id" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "erased_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "erased_users_pkey" PRIMARY KEY ("user_id")
);

-- CreateIndex
CREATE INDEX "saved_memories_user_id_created_at_idx" ON "saved_memories"("user_id", "created_at" DESC);

-- CreateIndex
CREATE INDEX "saved_memories_source_message_id_idx" ON "saved_memories"("source_message_id");

-- CreateIndex
CREATE INDEX "saved_memories_source_thread_id_idx" ON "saved_memories"("source_thread_id");

-- AddForeignKey
ALTER TABLE "saved_memories" ADD CONSTRAINT "saved_memories_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "saved_memories" ADD CONSTRAINT "saved_memories_source_thread_id_fkey" FOREIGN KEY ("source_thread_id") REFERENCES "threads"("id") ON DELETE SET NULL ON UPDATE CASCADE;
