-- AlterTable
ALTER TABLE "spend_limits" ADD COLUMN     "service_key" TEXT;

-- CreateIndex
CREATE UNIQUE INDEX "spend_limits_service_key_key" ON "spend_limits"("service_key");

-- A limit belongs to exactly one user, group or service key.
ALTER TABLE "spend_limits" DROP CONSTRAINT "spend_limits_one_owner";
ALTER TABLE "spend_limits" ADD CONSTRAINT "spend_limits_one_owner" CHECK (num_nonnulls("user_id", "group_id", "service_key") = 1);
