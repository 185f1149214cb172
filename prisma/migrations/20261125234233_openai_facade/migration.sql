-- CreateTable
CREATE TABLE "facade_conversations" (
    "id" UUID NOT NULL,
    "user_id" TEXT NOT NULL,
    "client_key" TEXT NOT NULL,
    "thread_id" UUID NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "facade_conversations_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "facade_conversations_user_id_client_key_created_at_idx" ON "facade_conversations"("user_id", "client_key", "created_at" DESC);

-- CreateIndex
CREATE INDEX "facade_conversations_thread_id_idx" ON "facade_conversations"("thread_id");

-- CreateIndex
CREATE UNIQUE INDEX "facade_conversations_user_id_client_key_thread_id_key" ON "facade_conversations"("user_id", "client_key", "thread_id");

-- AddForeignKey
ALTER TABLE "facade_conversations" ADD CONSTRAINT "facade_conversations_thread_id_fkey" FOREIGN KEY ("thread_id") REFERENCES "threads"("id") ON DELETE CASCADE ON UPDATE CASCADE;
