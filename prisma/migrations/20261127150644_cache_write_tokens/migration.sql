-- AlterTable
ALTER TABLE "model_calls" ADD COLUMN     "reported_cache_write_tokens" INTEGER;
