-- AlterTable
ALTER TABLE "model_calls" ADD COLUMN     "system_prefix_hash" TEXT,
ADD COLUMN     "token_parts" JSONB,
ADD COLUMN     "tool_results" JSONB,
ADD COLUMN     "window_seqs" INTEGER[] DEFAULT ARRAY[]::INTEGER[];

-- CreateTable
CREATE TABLE "system_prefixes" (
    "hash" TEXT NOT NULL,
    "text" TEXT NOT NULL,
    "tokens" INTEGER NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "system_prefixes_pkey" PRIMARY KEY ("hash")
);
