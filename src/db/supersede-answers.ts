import type { Prisma } from './generated/client';

/**
 * Marks the non-user messages after `userSeq` (the answers being regenerated) superseded and drops their context
 * entries, pinned ones included, so the model never sees both answers. Returns the ids it marked.
 */
export async function supersedeAnswersAfter(tx: Prisma.TransactionClient, threadId: string, userSeq: number): Promise<string[]> {
  const rows = await tx.message.findMany({
    where: { threadId, seq: { gt: userSeq }, role: { not: 'user' }, superseded: false, deletedAt: null },
    select: { id: true, seq: true },
  });
  if (rows.length === 0) return [];
  const ids = rows.map((row) => row.id);
  await tx.message.updateMany({ where: { id: { in: ids } }, data: { superseded: true, pinned: false } });
  await tx.contextEntry.deleteMany({ where: { threadId, seq: { in: rows.flatMap((row) => (row.seq === null ? [] : [row.seq])) } } });
  return ids;
}
