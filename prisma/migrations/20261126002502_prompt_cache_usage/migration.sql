-- AlterTable
ALTER TABLE "model_calls" ADD COLUMN     "prompt_divergence" JSONB,
ADD COLUMN     "reported_cached_tokens" INTEGER;
