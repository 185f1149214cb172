-- AlterTable
ALTER TABLE "summary_revisions" ADD COLUMN     "segment_ends" INTEGER[] DEFAULT ARRAY[]::INTEGER[];

-- AlterTable
ALTER TABLE "threads" ADD COLUMN     "summary_segment_ends" INTEGER[] DEFAULT ARRAY[]::INTEGER[];
