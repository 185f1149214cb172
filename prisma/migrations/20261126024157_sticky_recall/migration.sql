-- AlterTable
ALTER TABLE "model_calls" ADD COLUMN     "recall_note" JSONB;
