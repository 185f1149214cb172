-- AlterTable
ALTER TABLE "spend_group_members" ADD COLUMN     "via_claim" BOOLEAN NOT NULL DEFAULT false;
