-- CreateTable
CREATE TABLE "users" (
    "id" TEXT NOT NULL,
    "kind" TEXT NOT NULL DEFAULT 'guest',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "users_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "threads" (
    "id" UUID NOT NULL,
    "owner_id" TEXT NOT NULL,
    "title" TEXT NOT NULL DEFAULT 'New chat',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "last_activity_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "last_seq" INTEGER NOT NULL DEFAULT 0,
    "summary_text" TEXT NOT NULL DEFAULT '',
    "summary_tokens" INTEGER NOT NULL DEFAULT 0,
    "summary_encoding" TEXT,
    "summary_covered_through_seq" INTEGER NOT NULL DEFAULT 0,
    "summary_revision" INTEGER NOT NULL DEFAULT 0,
    "context_start_seq" INTEGER NOT NULL DEFAULT 1,
    "memory_mode" TEXT NOT NULL DEFAULT 'summary',
    "settings" JSONB NOT NULL DEFAULT '{}',
    "version" INTEGER NOT NULL DEFAULT 0,
    "last_fold_at" TIMESTAMPTZ(3),
    "last_fold_error" TEXT,
    "lease_owner" TEXT,
    "lease_expires_at" TIMESTAMPTZ(3),

    CONSTRAINT "threads_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "messages" (
    "id" UUID NOT NULL,
    "thread_id" UUID NOT NULL,
    "seq" INTEGER,
    "role" TEXT NOT NULL,
    "content" TEXT NOT NULL DEFAULT '',
    "tool_calls" JSONB,
    "tool_call_id" TEXT,
    "status" TEXT NOT NULL DEFAULT 'complete',
    "error" JSONB,
    "tokens" INTEGER NOT NULL DEFAULT 0,
    "encoding" TEXT,
    "client_message_id" TEXT,
    "turn_id" UUID,
    "tool_run_id" UUID,
    "pinned" BOOLEAN NOT NULL DEFAULT false,
    "superseded" BOOLEAN NOT NULL DEFAULT false,
    "deleted_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "completed_at" TIMESTAMPTZ(3),

    CONSTRAINT "messages_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "context_entries" (
    "thread_id" UUID NOT NULL,
    "seq" INTEGER NOT NULL,
    "message_id" UUID,
    "role" TEXT NOT NULL,
    "content" TEXT NOT NULL,
    "tool_calls" JSONB,
    "tool_call_id" TEXT,
    "tokens" INTEGER NOT NULL,
    "encoding" TEXT NOT NULL,
    "pinned" BOOLEAN NOT NULL DEFAULT false,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "context_entries_pkey" PRIMARY KEY ("thread_id","seq")
);

-- CreateTable
CREATE TABLE "summary_revisions" (
    "id" UUID NOT NULL,
    "thread_id" UUID NOT NULL,
    "revision" INTEGER NOT NULL,
    "author" TEXT NOT NULL,
    "author_id" TEXT,
    "text" TEXT NOT NULL,
    "tokens" INTEGER NOT NULL,
    "from_seq" INTEGER NOT NULL,
    "through_seq" INTEGER NOT NULL,
    "model" TEXT,
    "tokens_in" INTEGER,
    "tokens_out" INTEGER,
    "duration_ms" INTEGER,
    "identifiers_kept" INTEGER,
    "identifiers_total" INTEGER,
    "redacted_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "summary_revisions_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "model_calls" (
    "id" UUID NOT NULL,
    "thread_id" UUID,
    "message_id" UUID,
    "purpose" TEXT NOT NULL,
    "model" TEXT NOT NULL,
    "estimated_prompt_tokens" INTEGER NOT NULL,
    "reported_prompt_tokens" INTEGER,
    "reported_completion_tokens" INTEGER,
    "latency_ms" INTEGER,
    "summary_revision" INTEGER,
    "window_from_seq" INTEGER,
    "window_through_seq" INTEGER,
    "pinned_seqs" INTEGER[] DEFAULT ARRAY[]::INTEGER[],
    "omitted" INTEGER NOT NULL DEFAULT 0,
    "overflow_retry" BOOLEAN NOT NULL DEFAULT false,
    "error" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "model_calls_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "tool_runs" (
    "id" UUID NOT NULL,
    "thread_id" UUID NOT NULL,
    "message_id" UUID NOT NULL,
    "tool_call_id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "args" JSONB NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'queued',
    "progress" DOUBLE PRECISION NOT NULL DEFAULT 0,
    "progress_note" TEXT,
    "result" TEXT,
    "result_tokens" INTEGER,
    "condensed" TEXT,
    "error" TEXT,
    "started_at_seq" INTEGER NOT NULL,
    "cancel_requested" BOOLEAN NOT NULL DEFAULT false,
    "reported_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "started_at" TIMESTAMPTZ(3),
    "finished_at" TIMESTAMPTZ(3),

    CONSTRAINT "tool_runs_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "audit_log" (
    "id" UUID NOT NULL,
    "actor" TEXT NOT NULL,
    "action" TEXT NOT NULL,
    "thread_id" UUID,
    "details" JSONB NOT NULL DEFAULT '{}',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "audit_log_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "turns" (
    "id" UUID NOT NULL,
    "thread_id" UUID NOT NULL,
    "kind" TEXT NOT NULL,
    "user_message_id" UUID,
    "status" TEXT NOT NULL DEFAULT 'queued',
    "error" JSONB,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "started_at" TIMESTAMPTZ(3),
    "finished_at" TIMESTAMPTZ(3),

    CONSTRAINT "turns_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "threads_owner_id_last_activity_at_idx" ON "threads"("owner_id", "last_activity_at" DESC);

-- CreateIndex
CREATE INDEX "threads_last_activity_at_idx" ON "threads"("last_activity_at" DESC);

-- CreateIndex
CREATE INDEX "messages_thread_id_status_idx" ON "messages"("thread_id", "status");

-- CreateIndex
CREATE INDEX "messages_turn_id_idx" ON "messages"("turn_id");

-- CreateIndex
CREATE UNIQUE INDEX "messages_thread_id_seq_key" ON "messages"("thread_id", "seq");

-- CreateIndex
CREATE UNIQUE INDEX "messages_thread_id_client_message_id_key" ON "messages"("thread_id", "client_message_id");

-- CreateIndex
CREATE UNIQUE INDEX "summary_revisions_thread_id_revision_key" ON "summary_revisions"("thread_id", "revision");

-- CreateIndex
CREATE INDEX "model_calls_thread_id_created_at_idx" ON "model_calls"("thread_id", "created_at");

-- CreateIndex
CREATE INDEX "model_calls_message_id_idx" ON "model_calls"("message_id");

-- CreateIndex
CREATE INDEX "tool_runs_thread_id_status_idx" ON "tool_runs"("thread_id", "status");

-- CreateIndex
CREATE INDEX "tool_runs_status_idx" ON "tool_runs"("status");

-- CreateIndex
CREATE INDEX "audit_log_thread_id_created_at_idx" ON "audit_log"("thread_id", "created_at");

-- CreateIndex
CREATE INDEX "turns_thread_id_status_created_at_idx" ON "turns"("thread_id", "status", "created_at");

-- CreateIndex
CREATE INDEX "turns_status_idx" ON "turns"("status");

-- AddForeignKey
ALTER TABLE "threads" ADD CONSTRAINT "threads_owner_id_fkey" FOREIGN KEY ("owner_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "messages" ADD CONSTRAINT "messages_thread_id_fkey" FOREIGN KEY ("thread_id") REFERENCES "threads"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "context_entries" ADD CONSTRAINT "context_entries_thread_id_fkey" FOREIGN KEY ("thread_id") REFERENCES "threads"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "summary_revisions" ADD CONSTRAINT "summary_revisions_thread_id_fkey" FOREIGN KEY ("thread_id") REFERENCES "threads"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "model_calls" ADD CONSTRAINT "model_calls_thread_id_fkey" FOREIGN KEY ("thread_id") REFERENCES "threads"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "tool_runs" ADD CONSTRAINT "tool_runs_thread_id_fkey" FOREIGN KEY ("thread_id") REFERENCES "threads"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "turns" ADD CONSTRAINT "turns_thread_id_fkey" FOREIGN KEY ("thread_id") REFERENCES "threads"("id") ON DELETE CASCADE ON UPDATE CASCADE;
