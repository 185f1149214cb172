-- AlterTable
ALTER TABLE "turns" ADD COLUMN     "cancel_requested" BOOLEAN NOT NULL DEFAULT false;
