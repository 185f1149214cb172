import { savedMemoriesInContext, savedMemoryLine, type TokenCounter } from '../context';
import { AppError } from '../errors/app-error';
import type { RateLimiter } from '../limits/rate-limiter';
import type { SavedMemory, SavedMemorySource, SavedMemoryStatus, SavedMemoryStore } from '../ports';
import { SAVED_MEMORY_MAX_CHARS } from './saved-memory';

/** What the saved memories use cases need; wired once in src/app/compose.ts. */
export interface SavedMemoryDeps {
  store: SavedMemoryStore;
  counter: Pick<TokenCounter, 'countText'>;
  /** MAX_MEMORY_ITEMS (default 200). */
  maxItems: number;
  /** USER_MEMORY_TOKENS: what fits in every pack (`inContext`). */
  capTokens: number;
  /** MEMORY_WRITES_PER_MINUTE per user. */
  writeLimiter: RateLimiter;
}

/**
 * An item as its owner sees it: whether the next packs carry it (false when left out over USER_MEMORY_TOKENS, and for
 * a proposal).
 */
export interface SavedMemoryView extends SavedMemory {
  inContext: boolean;
}

/** The trimmed text, or VALIDATION naming the field `text`. */
export function validSavedMemoryText(text: string): string {
  const trimmed = text.trim();
  if (trimmed === '' || trimmed.length > SAVED_MEMORY_MAX_CHARS) {
    throw new AppError('VALIDATION', `text: must be 1 to ${SAVED_MEMORY_MAX_CHARS} characters`, {
      details: { field: 'text' },
    });
  }
  return trimmed;
}

async function spendWrite(deps: SavedMemoryDeps, userId: string): Promise<void> {
  const decision = await deps.writeLimiter.hit(userId);
  if (decision.allowed) return;
  throw new AppError(
    'RATE_LIMITED',
    `Too many changes to saved memories; try again in ${decision.retryAfterSeconds} s.`,
    { details: { retryAfterSeconds: decision.retryAfterSeconds } },
  );
}

/** Tokens of an item's line in the pack, with its newline (what the cap sums). */
export function savedMemoryTokens(text: string, deps: Pick<SavedMemoryDeps, 'counter'>): number {
  // The line and its newline in the section.
  return deps.counter.countText(savedMemoryLine(text)) + 1;
}

/** The user's saved memories, newest first, each marked with whether the packs carry it (proposals never). */
export async function listSavedMemories(
  userId: string,
  deps: Pick<SavedMemoryDeps, 'store' | 'capTokens'>,
): Promise<SavedMemoryView[]> {
  const items = await deps.store.list(userId);
  const inContext = savedMemoriesInContext(
    items.filter((item) => item.status === 'active'),
    deps.capTokens,
  );
  return items.map((item) => ({ ...item, inContext: inContext.has(item.id) }));
}

async function viewOf(item: SavedMemory, deps: SavedMemoryDeps): Promise<SavedMemoryView> {
  const views = await listSavedMemories(item.userId, deps);
  return views.find((view) => view.id === item.id) ?? { ...item, inContext: false };
}

/**
 * Adds a saved memory (QUOTA_EXCEEDED past MAX_MEMORY_ITEMS, proposals included); `source` is the message that asked
 * for it; `status` `pending` makes it a proposal (default `active`).
 */
export async function addSavedMemory(
  input: { userId: string; text: string; source?: SavedMemorySource | null; status?: SavedMemoryStatus },
  deps: SavedMemoryDeps,
): Promise<SavedMemoryView> {
  const text = validSavedMemoryText(input.text);
  await spendWrite(deps, input.userId);
  const created = await deps.store.create({
    userId: input.userId,
    text,
    tokens: savedMemoryTokens(text, deps),
    source: input.source ?? null,
    maxItems: deps.maxItems,
    status: input.status ?? 'active',
  });
  if (!created) {
    throw new AppError(
      'QUOTA_EXCEEDED',
      `You already have ${deps.maxItems} saved memories, the most allowed (MAX_MEMORY_ITEMS): delete one first.`,
      { details: { limit: deps.maxItems } },
    );
  }
  return viewOf(created, deps);
}

/** Changes a saved memory's text; NOT_FOUND when the user has no such item. */
export async function editSavedMemory(
  input: { userId: string; id: string; text: string },
  deps: SavedMemoryDeps,
): Promise<SavedMemoryView> {
  const text = validSavedMemoryText(input.text);
  await spendWrite(deps, input.userId);
  const updated = await deps.store.update({
    userId: input.userId,
    id: input.id,
    text,
    tokens: savedMemoryTokens(text, deps),
  });
  if (!updated) throw new AppError('NOT_FOUND', 'No such saved memory.');
  return viewOf(updated, deps);
}

/** Approves a proposal: from now on it goes into the packs. NOT_FOUND when the user has no such item. */
export async function approveSavedMemory(
  input: { userId: string; id: string },
  deps: SavedMemoryDeps,
): Promise<SavedMemoryView> {
  await spendWrite(deps, input.userId);
  const approved = await deps.store.approve(input);
  if (!approved) throw new AppError('NOT_FOUND', 'No such saved memory.');
  return viewOf(approved, deps);
}

/** Deletes a saved memory, a proposal or an active item; NOT_FOUND when the user has no such item. */
export async function deleteSavedMemory(input: { userId: string; id: string }, deps: SavedMemoryDeps): Promise<void> {
  await spendWrite(deps, input.userId);
  if (!(await deps.store.remove(input))) throw new AppError('NOT_FOUND', 'No such saved memory.');
}

/** Dismisses a proposal (it is deleted, never having reached a prompt); NOT_FOUND when the user has no such proposal. */
export async function dismissSavedMemory(input: { userId: string; id: string }, deps: SavedMemoryDeps): Promise<void> {
  await spendWrite(deps, input.userId);
  if (!(await deps.store.remove({ ...input, status: 'pending' }))) {
    throw new AppError('NOT_FOUND', 'No such proposal (an approved item is deleted, not dismissed).');
  }
}

/**
 * The model's save (the save_memory tool): an item of the thread's owner whose source is the thread's newest user
 * message (the one that asked), `pending` under SAVE_MEMORY_TOOL=confirm. Refusals come back as text the model can
 * relay.
 */
export async function saveMemoryFromThread(
  input: { threadId: string; text: string; status: SavedMemoryStatus },
  deps: SavedMemoryDeps,
): Promise<{ saved: SavedMemoryView } | { refused: string }> {
  const owner = await deps.store.sourceOfThread(input.threadId);
  if (!owner) return { refused: 'This conversation no longer exists.' };
  try {
    return {
      saved: await addSavedMemory(
        { userId: owner.userId, text: input.text, source: owner.source, status: input.status },
        deps,
      ),
    };
  } catch (error) {
    if (error instanceof AppError && error.code !== 'INTERNAL') return { refused: error.message };
    throw error;
  }
}
