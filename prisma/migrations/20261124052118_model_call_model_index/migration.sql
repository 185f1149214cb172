-- CreateIndex
CREATE INDEX "model_calls_model_purpose_created_at_idx" ON "model_calls"("model", "purpose", "created_at");
