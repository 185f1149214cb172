-- AlterTable
ALTER TABLE "model_calls" ADD COLUMN     "prompt_fingerprints" INTEGER[] DEFAULT ARRAY[]::INTEGER[],
ADD COLUMN     "tools_fingerprint" INTEGER;
