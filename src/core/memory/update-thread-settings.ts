import {
  formatCondition,
  formatTriggerPolicy,
  parseKeepPolicy,
  parseTriggerPolicy,
  validatePolicies,
} from '../context';
import { foldDecisionFor } from '../thread-context/context-settings';
import type { MemoryMode } from '../context';
import type { RecallScope, Thread, ThreadSettings } from '../domain/types';
import { toThreadDto } from '../dto/api-dto';
import { AppError } from '../errors/app-error';
import type { MemoryActor, MemoryDeps } from './memory-deps';
import { threadForActor } from './thread-for-actor';

/** A settings change; `null` clears an override (back to the deployment's policy). */
export interface ThreadSettingsPatch {
  trigger?: string | null;
  keep?: string | null;
  memory?: MemoryMode;
  /** Admins only. */
  summaryPrompt?: string | null;
  /** Tokens of the thread's auto-recall slot (0: off); null: RECALL_TOKENS. */
  recallTokens?: number | null;
  /** Where recall looks: this thread or all of the user's; null: RECALL_SCOPE. */
  recallScope?: RecallScope | null;
}

export interface ThreadSettingsView {
  trigger: string | null;
  keep: string | null;
  memory: MemoryMode;
  summaryPrompt: string | null;
  recallTokens: number | null;
  recallScope: RecallScope | null;
  defaults: { trigger: string; keep: string; recallTokens: number; recallScope: RecallScope };
  pinnedTokens: number;
  pinnedMaxTokens: number;
  thread: Thread;
}

/** Longest summary prompt a thread may have. */
export const MAX_SUMMARY_PROMPT_CHARS = 8000;

function validation(field: string, message: string): AppError {
  return new AppError('VALIDATION', `${field}: ${message}`, { details: { field } });
}

/** The env's variable names in validatePolicies' messages, as the request's field names. */
function asFieldNames(message: string): string {
  return message.replace(/SUMMARY_TRIGGER/g, 'trigger').replace(/SUMMARY_KEEP/g, 'keep');
}

/** Validates the thread's trigger and keep exactly like the env's: parsed, and a fold must shrink well below the trigger. */
function validateOverrides(next: ThreadSettings, patch: ThreadSettingsPatch, deps: MemoryDeps): void {
  const { settings } = deps;
  const trigger = next.trigger ? parseTriggerPolicy(next.trigger, 'trigger') : null;
  if (trigger && !trigger.ok) throw validation('trigger', trigger.error.replace(/^trigger: /, ''));
  const keep = next.keep ? parseKeepPolicy(next.keep, 'keep') : null;
  if (keep && !keep.ok) throw validation('keep', keep.error.replace(/^keep: /, ''));
  const validated = validatePolicies({
    trigger: trigger?.ok ? trigger.value : settings.trigger,
    keep: keep?.ok ? keep.value : settings.keep,
    profile: settings.profile,
    summaryMaxTokens: settings.summaryMaxTokens,
    summarizerInputMaxTokens: settings.summarizerInputMaxTokens,
  });
  if (!validated.ok) {
    const field = patch.keep !== undefined && patch.trigger === undefined ? 'keep' : 'trigger';
    throw validation(field, asFieldNames(validated.error));
  }
}

function nextSettings(current: ThreadSettings, patch: ThreadSettingsPatch, actor: MemoryActor): ThreadSettings {
  if (patch.summaryPrompt !== undefined && !actor.admin)
    throw new AppError('FORBIDDEN', 'Only an admin can set the summary prompt of a thread.');
  if (
    typeof patch.summaryPrompt === 'string' &&
    (patch.summaryPrompt.trim() === '' || patch.summaryPrompt.length > MAX_SUMMARY_PROMPT_CHARS)
  ) {
    throw validation('summaryPrompt', `must be 1 to ${MAX_SUMMARY_PROMPT_CHARS} characters (null to use the default)`);
  }
  const next: ThreadSettings = { ...current };
  const apply = (key: 'trigger' | 'keep' | 'summaryPrompt', value: string | null | undefined) => {
    if (value === undefined) return;
    if (value === null) delete next[key];
    else next[key] = value.trim();
  };
  apply('trigger', patch.trigger);
  apply('keep', patch.keep);
  apply('summaryPrompt', patch.summaryPrompt);
  if (patch.recallTokens === null) delete next.recallTokens;
  else if (patch.recallTokens !== undefined) next.recallTokens = patch.recallTokens;
  if (patch.recallScope === null) delete next.recallScope;
  else if (patch.recallScope !== undefined) next.recallScope = patch.recallScope;
  return next;
}

export async function threadSettingsView(thread: Thread, deps: MemoryDeps): Promise<ThreadSettingsView> {
  return {
    trigger: thread.settings.trigger ?? null,
    keep: thread.settings.keep ?? null,
    memory: thread.memoryMode,
    summaryPrompt: thread.settings.summaryPrompt ?? null,
    recallTokens: thread.settings.recallTokens ?? null,
    recallScope: thread.settings.recallScope ?? null,
    defaults: {
      trigger: formatTriggerPolicy(deps.settings.trigger),
      keep: formatCondition(deps.settings.keep),
      recallTokens: deps.settings.recallTokens,
      recallScope: deps.settings.recallScope,
    },
    pinnedTokens: await deps.memory.pinnedTokens(thread.id),
    pinnedMaxTokens: deps.pinnedMaxTokens,
    thread,
  };
}

/** The thread's memory settings as the memory panel shows them. */
export async function getThreadSettings(
  input: { actor: MemoryActor; threadId: string },
  deps: MemoryDeps,
): Promise<ThreadSettingsView> {
  return threadSettingsView(await threadForActor(deps, input.threadId, input.actor), deps);
}

/**
 * Changes a thread's memory settings: trigger and keep (validated like SUMMARY_TRIGGER / SUMMARY_KEEP against the
 * deployment's model budget), the memory mode (`window-only` never folds) and, for admins, the summary prompt.
 * Bumps the thread's version (a fold planned under the old settings re-plans) and emits `thread-updated`.
 */
export async function updateThreadSettings(
  input: { actor: MemoryActor; threadId: string; patch: ThreadSettingsPatch },
  deps: MemoryDeps,
): Promise<ThreadSettingsView> {
  const thread = await threadForActor(deps, input.threadId, input.actor);
  const settings = nextSettings(thread.settings, input.patch, input.actor);
  validateOverrides(settings, input.patch, deps);
  const maxRecall = Math.floor(deps.settings.budget / 2);
  if (settings.recallTokens !== undefined && settings.recallTokens > maxRecall) {
    throw validation('recallTokens', `must be 0 to ${maxRecall} (half the context budget), or null for the default`);
  }
  const updated = await deps.memory.updateSettings({
    threadId: thread.id,
    settings,
    memoryMode: input.patch.memory ?? thread.memoryMode,
  });
  deps.events.publish({ type: 'thread-updated', threadId: thread.id, thread: toThreadDto(updated) });
  await enqueueFoldIfDue(updated.id, deps);
  return threadSettingsView(updated, deps);
}

/** New policies (or leaving window-only) may make a fold due now rather than after the next turn. */
async function enqueueFoldIfDue(threadId: string, deps: MemoryDeps): Promise<void> {
  const context = await deps.turns.loadContext(threadId);
  if (!context) return;
  const decision = foldDecisionFor(context, deps.settings);
  if (!decision.fold) return;
  await deps.jobs
    .enqueueFold(threadId, 'settings changed')
    .catch((error: unknown) => deps.log.warn({ err: error, threadId }, 'could not enqueue a fold; the sweeper will'));
}
