import type { Prisma } from './generated/client';

/**
 * Marks the non-user messages after `userSeq` (the answers being regenerated) superseded and drops their context
 * entries, pinned ones included, so the model never sees both answers. Returns the ids it marked. The rule is the
 * SQL function chat_supersede_answers_after (migration turn_path_functions), shared with the turn's start.
 */
export async function supersedeAnswersAfter(
  tx: Prisma.TransactionClient,
  threadId: string,
  userSeq: number,
): Promise<string[]> {
  const rows = await tx.$queryRaw<
    { ids: string[] }[]
  >`SELECT chat_supersede_answers_after(${threadId}::uuid, ${userSeq}::int) AS ids`;
  return rows[0]?.ids ?? [];
}
