-- AlterTable
ALTER TABLE "threads" ADD COLUMN     "title_source" TEXT NOT NULL DEFAULT 'default';

-- Titles set before this column existed were given by a user (at creation or by a rename) or copied by a branch:
-- an automatic title never replaces them.
UPDATE "threads" SET "title_source" = 'user' WHERE "title" <> 'New chat';
