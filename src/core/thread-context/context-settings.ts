import type { ContextState, KeepPolicy, ModelProfile, TokenCounter, TriggerPolicy } from '../context';
import { parseKeepPolicy } from '../context';
import { parseTriggerPolicy } from '../context';
import type { RecallScope, ThreadContext } from '../domain/types';
import {
  correctedBudget,
  mergeRecallCandidates,
  shouldFold,
  upperBoundTextTokens,
  type EstimateCorrection,
  type FoldDecision,
} from '../context';
import { isSummaryWithdrawn, MEMORY_REBUILDING_NOTE } from '../domain/types';

/** The deployment's context configuration, resolved once at boot (see src/app/compose.ts). */
export interface ContextSettings {
  profile: ModelProfile;
  /** Max input minus reserved output: no pack exceeds it. */
  budget: number;
  trigger: TriggerPolicy;
  keep: KeepPolicy;
  summaryMaxTokens: number;
  summarizerInputMaxTokens: number;
  /** `PINNED_MAX_TOKENS`: cap of a thread's pinned entries (default a quarter of the budget). */
  pinnedMaxTokens: number;
  /** `TOOL_RESULT_INLINE_TOKENS`: larger tool results are condensed before they enter the context. */
  toolResultInlineTokens: number;
  /** The stable system prefix (SYSTEM_PROMPT), first in every pack so provider prompt caches hit. */
  systemPrefix: string;
  compat: 'openai' | 'strict';
  counter: TokenCounter;
  /** RECALL_TOKENS: the auto-recall slot of every pack (default derived from the budget; 0 turns it off). */
  recallTokens: number;
  /** RECALL_SCOPE: where auto-recall and search_transcript look by default (`user`: all of the owner's threads). */
  recallScope: RecallScope;
  /** RECALL_GATE: a user message gets a new recall slot only when recall is likely to add something (recallEarnsItsTokens). */
  recallGate?: boolean;
  /** RECALL_HELD_TOKENS: the tokens held recall notes may take together (BuildContextPackOptions.recallHeldTokens). */
  recallHeldTokens?: number;
  /**
   * RECALL_STICKY: a recall slot, once shown, stays next to the message it served until the next fold (held notes);
   * off: each user message's slot is shown for its own turn only. Absent: off.
   */
  recallSticky?: boolean;
  /** USER_MEMORY_TOKENS: cap of the user's saved memories in every pack (default a tenth of the budget, at most 1,000). */
  userMemoryTokens: number;
  /**
   * The chat model's correction of our prompt estimate from reported usage (>= 1): the budget guard and the trigger
   * apply it. Absent: estimates are taken as they are.
   */
  correction?: EstimateCorrection;
}

/** The factor every prompt estimate of the chat model is multiplied by (1 without a correction). */
export function estimateFactor(settings: Pick<ContextSettings, 'correction'>): number {
  return settings.correction?.factor ?? 1;
}

/** The pack budget after the correction: a pack within it is within `settings.budget` as the provider counts. */
export function packBudget(settings: Pick<ContextSettings, 'budget' | 'correction'>): number {
  return correctedBudget(settings.budget, estimateFactor(settings));
}

/** Whether the thread's window should be folded now, with its own trigger and the model's estimate correction. */
export function foldDecisionFor(context: ThreadContext, settings: ContextSettings): FoldDecision {
  return shouldFold(
    contextStateOf(context, settings),
    policiesFor(context, settings).trigger,
    settings.profile,
    estimateFactor(settings),
  );
}

/**
 * The engine's view of a stored thread context. A summary withdrawn after a forget is replaced by a short note
 * (MEMORY_REBUILDING_NOTE) until its rebuild commits, so the pack says that memory is being rebuilt.
 */
export function contextStateOf(context: ThreadContext, settings?: Pick<ContextSettings, 'recallSticky'>): ContextState {
  const sticky = settings?.recallSticky === true;
  const summary =
    isSummaryWithdrawn(context.thread) && context.thread.summary
      ? {
          ...context.thread.summary,
          text: MEMORY_REBUILDING_NOTE,
          tokens: upperBoundTextTokens(MEMORY_REBUILDING_NOTE),
        }
      : context.thread.summary;
  return {
    summary,
    window: context.window,
    pinned: context.pinned,
    contextStartSeq: context.thread.contextStartSeq,
    memoryMode: context.thread.memoryMode,
    ...(context.recalled || context.recalledElsewhere
      ? { recalled: mergeRecallCandidates(context.recalled ?? [], context.recalledElsewhere ?? []) }
      : {}),
    ...(sticky && context.heldRecall && context.heldRecall.length > 0 ? { heldRecall: context.heldRecall } : {}),
    ...(sticky && context.heldRecallTokens ? { heldRecallTokens: context.heldRecallTokens } : {}),
  };
}

/** The thread's auto-recall slot: its own setting, else RECALL_TOKENS. */
export function recallTokensFor(context: ThreadContext, settings: ContextSettings): number {
  const own = context.thread.settings.recallTokens;
  return typeof own === 'number' && Number.isInteger(own) && own >= 0 ? own : settings.recallTokens;
}

/** The thread's trigger and keep: its own overrides where valid, else the deployment's. */
export function policiesFor(
  context: ThreadContext,
  settings: ContextSettings,
): { trigger: TriggerPolicy; keep: KeepPolicy } {
  const own = context.thread.settings;
  const trigger = own.trigger ? parseTriggerPolicy(own.trigger) : null;
  const keep = own.keep ? parseKeepPolicy(own.keep) : null;
  return {
    trigger: trigger?.ok ? trigger.value : settings.trigger,
    keep: keep?.ok ? keep.value : settings.keep,
  };
}
