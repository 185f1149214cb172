import { parseTriggerPolicy, validatePolicies } from '../../core/context';
import { AppError } from '../../core/errors/app-error';
import type { StartedCompletion } from '../../core/facade/start-chat-completion';
import { updateThreadSettings } from '../../core/memory/update-thread-settings';
import type { HttpDeps } from '../http-deps';
import type { FacadeHttpDeps } from '../openai-facade/facade-deps';
import { compactionItem } from './compaction-token';
import type { ReadRequest } from './read-response-request';

interface RouteContext {
  deps: HttpDeps;
  facade: FacadeHttpDeps;
}

function invalid(message: string): AppError {
  return new AppError('VALIDATION', `context_management: ${message}`, { details: { field: 'context_management' } });
}

/**
 * The fold trigger a request's `context_management` asks for, checked before anything is spent or stored: `tokens=N`
 * for `{type: "compaction", compact_threshold: N}`, null for a compaction entry without a threshold (the thread's
 * trigger stays), undefined when the request has no such entry. A threshold the deployment's keep policy cannot fold
 * well below, or another entry type, is a 400 naming `context_management`.
 */
export function requestedTrigger(read: ReadRequest, deps: Pick<HttpDeps, 'settings'>): string | null | undefined {
  const entries = read.body.context_management;
  if (!entries || entries.length === 0) return undefined;
  const other = entries.find((entry) => entry.type !== 'compaction');
  if (other) throw invalid(`"${other.type}" entries are not served (only "compaction").`);
  const threshold = entries.find((entry) => typeof entry.compact_threshold === 'number')?.compact_threshold;
  if (typeof threshold !== 'number') return null;
  const trigger = `tokens=${threshold}`;
  const parsed = parseTriggerPolicy(trigger, 'compact_threshold');
  if (!parsed.ok) throw invalid(parsed.error);
  const { settings } = deps;
  const validated = validatePolicies({
    trigger: parsed.value,
    keep: settings.keep,
    profile: settings.profile,
    summaryMaxTokens: settings.summaryMaxTokens,
    summarizerInputMaxTokens: settings.summarizerInputMaxTokens,
  });
  if (!validated.ok)
    throw invalid(validated.error.replace(/SUMMARY_TRIGGER tokens=\d+/g, `compact_threshold ${threshold}`));
  return trigger;
}

/**
 * `context_management: [{type: "compaction", compact_threshold}]`: the conversation's fold trigger becomes
 * `tokens=<compact_threshold>` (the thread's own trigger, as the memory panel sets it; unchanged when it already is).
 */
export async function applyContextManagement(
  input: { trigger: string | null; started: StartedCompletion; userId: string },
  context: RouteContext,
): Promise<void> {
  const { trigger, started, userId } = input;
  if (trigger === null || started.thread.settings.trigger === trigger) return;
  try {
    await updateThreadSettings(
      { actor: { userId, admin: false }, threadId: started.thread.id, patch: { trigger } },
      context.deps.memory,
    );
  } catch (error) {
    if (error instanceof AppError && error.code === 'VALIDATION')
      throw invalid(error.message.replace(/^trigger: /, ''));
    throw error;
  }
}

/**
 * The compaction item a managed conversation's answer carries when a fold landed since the request began: once the
 * answer is stored, a fold runs if the thread's trigger is reached (as its background fold would; bounded by
 * TURN_TIMEOUT_MS), then, when the summary's revision moved past the one the request started on, one `compaction`
 * item standing for the thread through its answer. A failed fold is logged (its background fold tries again).
 */
export async function foldedSinceItems(
  input: { started: StartedCompletion; userId: string },
  context: RouteContext,
): Promise<unknown[]> {
  const { started, userId } = input;
  const { deps, facade } = context;
  const threadId = started.thread.id;
  const before = started.thread.summary?.revision ?? 0;
  try {
    await facade.fold(threadId, { force: false, signal: AbortSignal.timeout(deps.limits.turnTimeoutMs) });
  } catch (error) {
    deps.log.warn({ err: error, threadId }, 'the fold after a managed answer failed; its background fold will retry');
  }
  const thread = await deps.threads.findThread(threadId, userId);
  const revision = thread?.summary?.revision ?? 0;
  if (!thread || revision <= before) return [];
  return [compactionItem(facade.compactionKey, userId, { threadId, revision, atSeq: thread.lastSeq })];
}
