import { condenseOversizedMessage } from './condense-oversized-message';
import { buildRecallSlot, recallKey, renderRecallNote, type RecalledElsewhere } from './build-recall-slot';
import { recallEarnsItsTokens } from './recall-gate';
import { groupExchangeBlocks } from './group-exchange-blocks';
import { upperBoundMessageTokens, upperBoundTextTokens, type MessageMeasure } from './measure-message';
import { renderEntries } from './render-entries';
import { renderStrict } from './render-strict';
import { savedMemoriesInContext, savedMemoriesSection } from './saved-memories-section';
import { REPLY_PRIMING_TOKENS, TOKENS_PER_MESSAGE, type TokenCounter } from './token-counter';
import type { ChatTemplateCompat } from './validate-pack-ordering';
import type { ContextEntry, ContextState, HeldRecallNote, PackMessage, SavedMemoryItem, SummaryState } from './types';

/** The note a pack carries when the budget guard left out its oldest window entries. */
export const OMITTED_NOTE_SUMMARY =
  'Earlier messages of this conversation are being summarized and are not shown here.';
/** The same note for window-only threads, where left-out messages are simply gone from the context. */
export const OMITTED_NOTE_WINDOW_ONLY = 'Earlier messages of this conversation are not shown here.';

export interface BuildContextPackOptions {
  /** The stable system prompt; first in every pack so provider prompt caches hit on it. */
  systemPrefix: string;
  state: ContextState;
  /** Tokens the pack may use (budgetOf(profile)). */
  budget: number;
  /** Counts rewritten text exactly. Without it, pass systemPrefixTokens; rewritten text is bounded by its bytes. */
  counter?: Pick<TokenCounter, 'countMessage'>;
  /** `countText(systemPrefix)`, computed once per process, when there is no counter. */
  systemPrefixTokens?: number;
  /** Default `openai`. */
  compat?: ChatTemplateCompat;
  /** Per-call server notes (the server's own text), at the end of the pack with the other per-call parts. */
  notes?: readonly string[];
  /** Tokens of the auto-recall slot (RECALL_TOKENS or the thread's setting); 0 or absent: no slot. */
  recallTokens?: number;
  /** RECALL_GATE: a new slot only when recallEarnsItsTokens says recall is likely to add something. Absent: always. */
  recallGate?: boolean;
  /**
   * RECALL_HELD_TOKENS: the tokens held recall notes may take together. A new slot that would take them past it serves
   * its own turn only (the manifest records no note to hold): held notes are read on every later call until the next
   * fold and count towards its trigger, so without a bound they grow with every recalled question. Absent: no bound.
   */
  recallHeldTokens?: number;
  /**
   * RECALL_STICKY: later calls hold this call's new slot in place (the manifest records it as `recallNote`, and the
   * slot is marked `held`). False: the slot serves its own turn only. Absent: true.
   */
  recallSticky?: boolean;
  /**
   * The user's saved memories (newest first) and their cap (USER_MEMORY_TOKENS): the newest that fit go into the
   * leading system message after the system prefix, before the summary. Absent: none.
   */
  savedMemories?: { items: readonly SavedMemoryItem[]; tokens: number };
}

/** A tool result as it entered the pack: the (possibly condensed) text the model got, not the transcript's. */
export interface PackToolResult {
  seq: number;
  /** `tool`: an inline call's answer; `system`: an async run's result note. */
  role: 'tool' | 'system';
  toolCallId: string | null;
  content: string;
  tokens: number;
}

/** Estimated prompt tokens of each part of a pack (as rendered for OpenAI; they add up to `ContextPack.tokens`). */
export interface PackTokenParts {
  systemPrefix: number;
  summary: number;
  pinned: number;
  window: number;
  /** The auto-recall slot: what this call recalled anew. */
  recall: number;
  /** Recall notes of earlier calls held in place since the last fold (sticky recall; absent when none). */
  heldRecall?: number;
  /** The saved memories section of the leading message (absent in calls recorded before it existed). */
  savedMemories?: number;
  /** Per-call server notes and the omitted-messages note. */
  notes: number;
  /** The reply priming every call pays. */
  priming: number;
}

/** What one model call was given, by reference to what the store keeps (seqs, the summary revision). */
export interface ContextPackManifest {
  summaryRevision: number | null;
  windowFromSeq: number | null;
  windowThroughSeq: number | null;
  pinnedSeqs: number[];
  /** Transcript messages the auto-recall slot showed. */
  recalledSeqs: number[];
  /** The user's saved memories the leading message carried. */
  savedMemoryIds: string[];
  /** Messages of the user's other threads the auto-recall slot showed (cross-thread recall). */
  recalledElsewhere: RecalledElsewhere[];
  /**
   * What this call recalled anew for the newest user message (the slot), to be held in place by later calls of the
   * same summary revision (sticky recall); null when the call recalled nothing new. `recalledSeqs` and
   * `recalledElsewhere` list everything recalled the pack showed, held notes included.
   */
  recallNote?: { servedSeq: number; seqs: number[]; elsewhere: RecalledElsewhere[]; tokens: number } | null;
  /** Every window seq the pack carried (a window has gaps once messages are forgotten or superseded). */
  windowSeqs: number[];
  /** Tool results of the window and the pinned entries, as they entered the pack. */
  toolResults: PackToolResult[];
  parts: PackTokenParts;
  /**
   * Index of the first message the per-call parts (recall, notes) changed: everything before it only grows between
   * folds. Absent on manifests stored before it existed.
   */
  perCallFrom?: number;
}

export interface ContextPack {
  messages: PackMessage[];
  /** The estimated prompt tokens: the messages plus the reply priming. Never above the budget. */
  tokens: number;
  /** Window entries the budget guard left out. */
  omitted: number;
  manifest: ContextPackManifest;
}

/** Thrown when even the system message, the pinned entries and the newest window turn exceed the budget. */
export class ContextOverBudgetError extends Error {
  readonly code = 'CONTEXT_OVER_BUDGET';
  constructor(
    readonly required: number,
    readonly budget: number,
  ) {
    super(`The context needs at least ${required} tokens, above the budget of ${budget}`);
    this.name = 'ContextOverBudgetError';
  }
}

/**
 * The heading of the summary section of the leading system message. It names no seq: the text after it only grows
 * between consolidations (a fold appends a segment), so everything up to the end of the earlier segments stays a
 * cacheable prefix; the coverage follows the text (summaryCoverage).
 */
export function summaryHeading(): string {
  return '## Summary of the conversation so far';
}

/** The line after the summary's text: how far it reaches (it changes at every fold, after the earlier segments). */
export function summaryCoverage(summary: SummaryState): string {
  return `(The summary covers the conversation through message #${summary.coveredThroughSeq}.)`;
}

/** The saved memories that fit their cap (newest first in, the pack shows them oldest first). */
function chosenSavedMemories(options: BuildContextPackOptions): SavedMemoryItem[] {
  const given = options.savedMemories;
  if (!given || given.tokens <= 0 || given.items.length === 0) return [];
  const ids = savedMemoriesInContext(given.items, given.tokens);
  return given.items.filter((item) => ids.has(item.id));
}

/**
 * The leading system message: the stable system prefix (the same for every thread), then what changes rarely: the
 * user's saved memories, then the summary.
 */
function leadingMessage(
  options: BuildContextPackOptions,
  memories: readonly SavedMemoryItem[],
  measure: MessageMeasure,
): PackMessage {
  const summary = options.state.summary;
  const heading = summary && summary.text !== '' ? `\n\n${summaryHeading()}\n` : '';
  const coverage = summary && heading !== '' ? `\n${summaryCoverage(summary)}` : '';
  const memorySection = savedMemoriesSection(memories);
  const head = options.systemPrefix + memorySection;
  const content = head + (summary && heading !== '' ? heading + summary.text + coverage : '');
  const stable =
    summary && heading !== '' && head !== '' ? { stableEnds: stableEndsOf(head.length, heading.length, summary) } : {};
  if (options.counter) return { role: 'system', content, tokens: measure({ role: 'system', content }), ...stable };
  if (options.systemPrefixTokens === undefined) {
    throw new TypeError('buildContextPack needs a counter or systemPrefixTokens');
  }
  // Stored counts plus bounds for the heading and the coverage line (plain English words and a number: at least two
  // bytes a token); +4 for tokens merging across the joins.
  const sectionTokens =
    summary && heading !== ''
      ? upperBoundTextTokens(heading) + summary.tokens + Math.ceil(upperBoundTextTokens(coverage) / 2) + 4
      : 0;
  const memoryTokens =
    memorySection !== ''
      ? upperBoundTextTokens(memorySection.slice(0, memorySection.indexOf('\n- '))) +
        memories.reduce((sum, item) => sum + item.tokens + 1, 0) +
        2
      : 0;
  return {
    role: 'system',
    content,
    tokens: TOKENS_PER_MESSAGE + 1 + options.systemPrefixTokens + sectionTokens + memoryTokens,
    ...stable,
  };
}

/**
 * The leading message's stable ends (PackMessage.stableEnds): where its head ends (the summary's heading follows),
 * then where each summary segment ends. Ends that do not describe the text (a summary stored before segments) make
 * it one segment.
 */
function stableEndsOf(headEnd: number, headingLength: number, summary: SummaryState): number[] {
  const ends = summary.segmentEnds ?? [];
  const valid = ends.at(-1) === summary.text.length && ends.every((end, index) => end > (ends[index - 1] ?? 0));
  return [headEnd, ...(valid ? ends : [summary.text.length]).map((end) => headEnd + headingLength + end)];
}

function sumTokens(messages: readonly PackMessage[]): number {
  return messages.reduce((sum, message) => sum + message.tokens, 0);
}

function systemNote(content: string, measure: MessageMeasure): PackMessage {
  return { role: 'system', content, tokens: measure({ role: 'system', content }) };
}

interface Assembly {
  /** The leading system message and the pinned entries: they change only at a fold, a pin or an unpin. */
  head: PackMessage[];
  /** The window: append-only between folds. */
  blocks: { entries: ContextEntry[]; messages: PackMessage[] }[];
  /** The auto-recall slot (per call, at the end); null once dropped. */
  recall: PackMessage | null;
  /** Held recall notes by the seq of the user message they serve (inside the blocks already). */
  held: Map<number, PackMessage>;
  /** Per-call server notes. */
  tail: PackMessage[];
  omittedNote: PackMessage;
}

/** The per-call parts that go right after the newest user message: the omitted-messages note, the recall slot. */
function afterNewestParts(assembly: Assembly, start: number): PackMessage[] {
  return [...(start > 0 ? [assembly.omittedNote] : []), ...(assembly.recall ? [assembly.recall] : [])];
}

/** Index (in the window's messages) of the newest user entry's message; the window's length when there is none. */
function newestUserIndex(assembly: Assembly, start: number, window: readonly PackMessage[]): number {
  const newest = assembly.blocks
    .slice(start)
    .flatMap((block) => block.entries)
    .filter((entry) => entry.role === 'user')
    .at(-1);
  const index = newest ? window.findIndex((message) => message.seq === newest.seq) : -1;
  return index === -1 ? window.length : index;
}

/**
 * head, the window up to and with the newest user message, the per-call parts that serve it, what followed that
 * message (the turn's tool rounds), then per-call server notes. So the recall slot stays in place across a turn's
 * rounds and follow-ups (its query is that message), and the next turn's prompt reuses everything before it, the
 * user's message included (a slot just before the message made the next call pay the message again, measured on
 * bench:cache). Strict templates merge the parts into that user turn, after its text.
 */
function assemble(
  assembly: Assembly,
  start: number,
  options: { perCall?: boolean; compat?: ChatTemplateCompat | undefined } = {},
): PackMessage[] {
  const window = assembly.blocks.slice(start).flatMap((block) => block.messages);
  if (options.perCall === false) return [...assembly.head, ...window];
  const newest = newestUserIndex(assembly, start, window);
  const at = Math.min(newest + 1, window.length);
  return [
    ...assembly.head,
    ...window.slice(0, at),
    ...afterNewestParts(assembly, start),
    ...window.slice(at),
    ...assembly.tail,
  ];
}

/** The smallest number of oldest window blocks to leave out so the (openai-rendered) pack fits. */
function firstFittingStart(assembly: Assembly, budget: number): number {
  const fixed =
    sumTokens(assembly.head) + (assembly.recall?.tokens ?? 0) + sumTokens(assembly.tail) + REPLY_PRIMING_TOKENS;
  let windowTokens = assembly.blocks.reduce((sum, block) => sum + sumTokens(block.messages), 0);
  let start = 0;
  while (
    start < assembly.blocks.length &&
    fixed + windowTokens + (start > 0 ? assembly.omittedNote.tokens : 0) > budget
  ) {
    windowTokens -= sumTokens(assembly.blocks[start]?.messages ?? []);
    start += 1;
  }
  return start;
}

/**
 * The newest block with its longest user message condensed (condenseOversizedMessage) so the pack fits with no older
 * block, or null (the block left as it was) when even that cannot fit.
 */
function condenseNewestBlock(input: {
  assembly: Assembly;
  budget: number;
  render: (start: number) => PackMessage[];
  measure: MessageMeasure;
  held: ReadonlyMap<number, PackMessage>;
}): { start: number; messages: PackMessage[] } | null {
  const { assembly, budget, render, measure } = input;
  const last = assembly.blocks.length - 1;
  const original = assembly.blocks[last];
  const longest = original?.entries
    .filter((entry) => entry.role === 'user')
    .reduce<ContextEntry | undefined>((max, entry) => (!max || entry.tokens > max.tokens ? entry : max), undefined);
  if (!original || !longest) return null;
  let current = longest.tokens;
  // A strict rendering merges messages and is re-measured: a round or two more when the first cut is not enough.
  for (let round = 0; round < 3; round += 1) {
    const over = sumTokens(render(last)) + REPLY_PRIMING_TOKENS - budget;
    const condensed = condenseOversizedMessage({ entry: longest, tokens: current - Math.max(1, over), measure });
    if (!condensed) break;
    const entries = original.entries.map((entry) => (entry === longest ? condensed : entry));
    assembly.blocks[last] = { entries, messages: withHeldNotes(renderEntries(entries, measure), input.held) };
    current = condensed.tokens;
    const start = firstFittingStart(assembly, budget);
    const messages = render(start);
    if (start <= last && sumTokens(messages) + REPLY_PRIMING_TOKENS <= budget) return { start, messages };
  }
  assembly.blocks[last] = original;
  return null;
}

/**
 * The held notes that still apply: those serving a user message of the window, without what the pack now shows
 * otherwise (a message pinned since), and not empty.
 */
function applicableHeldNotes(
  state: ContextState,
  window: readonly ContextEntry[],
  pinned: readonly ContextEntry[],
): HeldRecallNote[] {
  const userSeqs = new Set(window.filter((entry) => entry.role === 'user').map((entry) => entry.seq));
  const shown = new Set([...window, ...pinned].map((entry) => entry.seq));
  return (state.heldRecall ?? [])
    .filter((note) => userSeqs.has(note.servedSeq))
    .map((note) => ({
      servedSeq: note.servedSeq,
      recalled: note.recalled.filter((message) => message.thread !== undefined || !shown.has(message.seq)),
    }))
    .filter((note) => note.recalled.length > 0);
}

/**
 * A block's messages with the held recall notes of its user messages: right after the message a note served, where
 * the slot stood when it was shown (strict: renderStrict merges it into that user turn).
 */
function withHeldNotes(messages: PackMessage[], held: ReadonlyMap<number, PackMessage>): PackMessage[] {
  if (held.size === 0) return messages;
  return messages.flatMap((message) => {
    const note = message.seq !== undefined && message.role === 'user' ? held.get(message.seq) : undefined;
    return note ? [message, note] : [message];
  });
}

/**
 * Builds what one model call gets, ordered so that a call's prompt extends its predecessor's (a provider's prompt
 * cache reuses the longest common prefix): one leading system message (the stable prefix, then the summary section
 * when there is a summary), the pinned entries, the window oldest first (append-only between folds, each entry
 * rendered the same way on every call), with the per-call parts next to the newest user message: the
 * omitted-messages note and the auto-recall slot right after it, server notes at the end; never in front of stable
 * content. Entries before the context start
 * never appear. Budget guard: when it does not fit, the oldest window blocks are left out whole (no orphan tool
 * message, never starting with a tool message), `omitted` counts them and one note says earlier messages are being
 * summarized. When even the newest window block cannot fit alone, its longest user message goes in condensed (its
 * head and tail around a marker naming what was cut; the transcript keeps it whole); ContextOverBudgetError when
 * even that cannot fit.
 * Auto-recall: with `recallTokens`, the best of `state.recalled` that fit it go in one user-level message (never a
 * window or pinned entry again); over budget it is dropped first.
 * `compat: 'strict'` renders the same information for strict chat templates (see renderStrict): there the per-call
 * parts join the last user turn.
 */
export function buildContextPack(options: BuildContextPackOptions): ContextPack {
  const { state } = options;
  const counter = options.counter;
  const measure: MessageMeasure = counter ? (message) => counter.countMessage(message) : upperBoundMessageTokens;
  const visible = (entry: ContextEntry): boolean => entry.seq >= state.contextStartSeq;
  const pinned = state.pinned.filter(visible);
  const window = state.window.filter(visible);
  const note = state.memoryMode === 'window-only' ? OMITTED_NOTE_WINDOW_ONLY : OMITTED_NOTE_SUMMARY;
  // Sticky recall: notes shown by earlier calls stay where they were; a message a note already serves gets no new slot
  // (a later round of its turn, a regeneration), and a new slot shows only what no note holds.
  const heldNotes = applicableHeldNotes(state, window, pinned);
  const held = new Map(
    heldNotes.map((note) => [note.servedSeq, { ...renderRecallNote(note.recalled, measure), held: true as const }]),
  );
  const newestUser = window.filter((entry) => entry.role === 'user').at(-1);
  const inputs: PackInputs = { options, measure, pinned, window, heldNotes, held, newestUser };
  const slot = newRecallSlot(inputs);
  const memories = chosenSavedMemories(options);
  const assembly: Assembly = {
    head: [leadingMessage(options, memories, measure), ...renderEntries(pinned, measure)],
    blocks: groupExchangeBlocks(window).map((entries) => ({
      entries,
      messages: withHeldNotes(renderEntries(entries, measure), held),
    })),
    recall: slot?.message ?? null,
    held,
    tail: (options.notes ?? []).map((content) => systemNote(content, measure)),
    omittedNote: systemNote(note, measure),
  };
  const render = (start: number): PackMessage[] =>
    options.compat === 'strict'
      ? renderStrict(assemble(assembly, start, { compat: 'strict' }), measure)
      : assemble(assembly, start);
  const { start, messages } = fitToBudget({ assembly, budget: options.budget, render, measure, held });
  return packOf(inputs, { assembly, slot, memories, start, messages });
}

/** What buildContextPack's steps share: the call's options and what it derived from the state before assembling. */
interface PackInputs {
  options: BuildContextPackOptions;
  measure: MessageMeasure;
  /** The pinned entries and the window, without entries before the context start. */
  pinned: ContextEntry[];
  window: ContextEntry[];
  /** The held recall notes that still apply, and their rendered messages by the seq they serve. */
  heldNotes: HeldRecallNote[];
  held: Map<number, PackMessage>;
  newestUser: ContextEntry | undefined;
}

type RecallSlot = NonNullable<ReturnType<typeof buildRecallSlot>>;

/**
 * RECALL_GATE: true when the gate is on and says recall is unlikely to add anything to what the pack holds already
 * (the pinned entries and the window's user and assistant text, the summary, the held notes).
 */
function recallGated(inputs: PackInputs): boolean {
  const { options, pinned, window, held, newestUser } = inputs;
  return (
    options.recallGate === true &&
    newestUser !== undefined &&
    (options.recallTokens ?? 0) > 0 &&
    !recallEarnsItsTokens({
      query: newestUser.content,
      held: [
        ...[...pinned, ...window]
          .filter((entry) => entry !== newestUser && (entry.role === 'user' || entry.role === 'assistant'))
          .map((entry) => entry.content),
        ...(options.state.summary ? [options.state.summary.text] : []),
        ...[...held.values()].map((note) => note.content),
      ],
      candidates: (options.state.recalled ?? []).map((message) => message.content),
    })
  );
}

/** The auto-recall slot of this call: none when a held note serves the newest user message or the gate says no. */
function newRecallSlot(inputs: PackInputs): RecallSlot | null {
  const { options, pinned, window, heldNotes, held, newestUser, measure } = inputs;
  const gated = recallGated(inputs);
  if ((newestUser && held.has(newestUser.seq)) || gated) return null;
  return buildRecallSlot({
    recalled: options.state.recalled ?? [],
    excludeSeqs: new Set([...pinned, ...window].map((entry) => entry.seq)),
    excludeKeys: new Set(heldNotes.flatMap((note) => note.recalled.map(recallKey))),
    tokens: options.recallTokens ?? 0,
    measure,
  });
}

/**
 * The budget guard: the first window block to keep and the rendered pack. The recall slot goes first, then the
 * oldest blocks; when even the newest block alone does not fit, its longest user message goes in condensed;
 * ContextOverBudgetError when even that does not fit.
 */
function fitToBudget(input: {
  assembly: Assembly;
  budget: number;
  render: (start: number) => PackMessage[];
  measure: MessageMeasure;
  held: ReadonlyMap<number, PackMessage>;
}): { start: number; messages: PackMessage[] } {
  const { assembly, budget, render } = input;
  let start = firstFittingStart(assembly, budget);
  let messages = render(start);
  // Over budget, the recall slot goes before any window entry does.
  if (assembly.recall && (start > 0 || sumTokens(messages) + REPLY_PRIMING_TOKENS > budget)) {
    assembly.recall = null;
    start = firstFittingStart(assembly, budget);
    messages = render(start);
  }
  // Strict rendering re-measures merged text; leave out more blocks in the rare case it grew.
  while (sumTokens(messages) + REPLY_PRIMING_TOKENS > budget && start < assembly.blocks.length) {
    start += 1;
    messages = render(start);
  }
  // The estimate measures blocks as sent apart; strict rendering merges them, which can let the newest block fit.
  if (start === assembly.blocks.length && start > 0) {
    const newest = render(start - 1);
    if (sumTokens(newest) + REPLY_PRIMING_TOKENS <= budget)
      ({ start, messages } = { start: start - 1, messages: newest });
  }
  if (sumTokens(messages) + REPLY_PRIMING_TOKENS > budget || (start === assembly.blocks.length && start > 0)) {
    // Even the newest block alone does not fit: its longest user message goes in condensed, when that fits.
    const required = sumTokens(render(Math.max(0, assembly.blocks.length - 1))) + REPLY_PRIMING_TOKENS;
    const fitted = condenseNewestBlock(input);
    if (!fitted) throw new ContextOverBudgetError(required, budget);
    ({ start, messages } = fitted);
  }
  return { start, messages };
}

/** Whether this call's new slot may be held by later calls: the held notes and it within RECALL_HELD_TOKENS. */
function heldFits(limit: number | undefined, heldTokens: number, fresh: RecallSlot): boolean {
  return limit === undefined || heldTokens + fresh.message.tokens <= limit;
}

/** The pack the budget guard fitted, with its manifest: what it carried, by reference to the store. */
function packOf(
  inputs: PackInputs,
  built: {
    assembly: Assembly;
    slot: RecallSlot | null;
    memories: SavedMemoryItem[];
    start: number;
    messages: PackMessage[];
  },
): ContextPack {
  const { options, measure, pinned, window, heldNotes, held, newestUser } = inputs;
  const { assembly, slot, memories, start, messages } = built;
  const tokens = sumTokens(messages) + REPLY_PRIMING_TOKENS;
  const kept = assembly.blocks.slice(start).flatMap((block) => block.entries);
  const keptSeqs = new Set(kept.map((entry) => entry.seq));
  const keptNotes = heldNotes.filter((note) => keptSeqs.has(note.servedSeq));
  const heldOwn = keptNotes.flatMap((note) =>
    note.recalled.filter((message) => !message.thread).map((message) => message.seq),
  );
  const heldElsewhere = keptNotes.flatMap((note) =>
    note.recalled.flatMap((message) => (message.thread ? [{ threadId: message.thread.id, seq: message.seq }] : [])),
  );
  const fresh = assembly.recall && slot ? slot : null;
  const heldTokens = keptNotes.reduce((sum, note) => sum + (held.get(note.servedSeq)?.tokens ?? 0), 0);
  const recallNote =
    fresh &&
    newestUser &&
    options.recallSticky !== false &&
    keptSeqs.has(newestUser.seq) &&
    heldFits(options.recallHeldTokens, heldTokens, fresh)
      ? { servedSeq: newestUser.seq, seqs: fresh.seqs, elsewhere: fresh.elsewhere, tokens: fresh.message.tokens }
      : null;
  return {
    // A slot the next calls will hold is marked as a held note is (the prompt they repeat ends after it).
    messages: recallNote
      ? messages.map((message) => (message === assembly.recall ? { ...message, held: true as const } : message))
      : messages,
    tokens,
    omitted: window.length - kept.length,
    manifest: {
      summaryRevision: options.state.summary?.revision ?? null,
      windowFromSeq: kept[0]?.seq ?? null,
      windowThroughSeq: kept.at(-1)?.seq ?? null,
      pinnedSeqs: pinned.map((entry) => entry.seq),
      recalledSeqs: [...new Set([...heldOwn, ...(fresh?.seqs ?? [])])].sort((a, b) => a - b),
      recalledElsewhere: [...heldElsewhere, ...(fresh?.elsewhere ?? [])],
      recallNote,
      savedMemoryIds: memories.map((item) => item.id),
      windowSeqs: kept.map((entry) => entry.seq),
      toolResults: [...pinned, ...kept]
        .filter(isToolResult)
        .sort((a, b) => a.seq - b.seq)
        .map(toPackToolResult),
      parts: tokenParts({
        options,
        assembly,
        start,
        measure,
        total: tokens,
        memories,
        heldTokens,
      }),
      perCallFrom: firstDifference(
        messages,
        options.compat === 'strict'
          ? renderStrict(assemble(assembly, start, { perCall: false }), measure)
          : assemble(assembly, start, { perCall: false }),
      ),
    },
  };
}

/** The index of the first message of `messages` that differs from `without` (the same pack without its per-call parts). */
function firstDifference(messages: readonly PackMessage[], without: readonly PackMessage[]): number {
  const index = messages.findIndex((message, at) => {
    const other = without[at];
    return !other || other.role !== message.role || other.content !== message.content;
  });
  return index === -1 ? messages.length : index;
}

function isToolResult(entry: ContextEntry): boolean {
  return entry.role === 'tool' || entry.role === 'system';
}

function toPackToolResult(entry: ContextEntry): PackToolResult {
  return {
    seq: entry.seq,
    role: entry.role === 'tool' ? 'tool' : 'system',
    toolCallId: entry.toolCallId ?? null,
    content: entry.content,
    tokens: entry.tokens,
  };
}

/** The parts of the openai rendering; a strict rendering merges messages, so its difference goes to the window. */
function tokenParts(input: {
  options: BuildContextPackOptions;
  assembly: Assembly;
  start: number;
  measure: MessageMeasure;
  total: number;
  memories: readonly SavedMemoryItem[];
  heldTokens: number;
}): PackTokenParts {
  const { options, assembly, start, measure } = input;
  const [leading, ...pinned] = assembly.head;
  const leadingTokens = leading?.tokens ?? 0;
  const prefixTokens = options.counter
    ? measure({ role: 'system', content: options.systemPrefix })
    : TOKENS_PER_MESSAGE + 1 + (options.systemPrefixTokens ?? 0);
  const systemPrefix = Math.min(prefixTokens, leadingTokens);
  const memorySection = savedMemoriesSection(input.memories);
  const savedMemories =
    memorySection === ''
      ? 0
      : Math.min(
          leadingTokens - systemPrefix,
          options.counter
            ? measure({ role: 'system', content: options.systemPrefix + memorySection }) - prefixTokens
            : input.memories.reduce((sum, item) => sum + item.tokens + 1, 0),
        );
  const notes = sumTokens(assembly.tail) + (start > 0 ? assembly.omittedNote.tokens : 0);
  const pinnedTokens = sumTokens(pinned);
  const recall = assembly.recall?.tokens ?? 0;
  const heldRecall = input.heldTokens;
  const fixed = leadingTokens + pinnedTokens + recall + heldRecall + notes + REPLY_PRIMING_TOKENS;
  return {
    systemPrefix,
    ...(savedMemories > 0 ? { savedMemories } : {}),
    summary: leadingTokens - systemPrefix - savedMemories,
    pinned: pinnedTokens,
    window: Math.max(0, input.total - fixed),
    recall,
    ...(heldRecall > 0 ? { heldRecall } : {}),
    notes,
    priming: REPLY_PRIMING_TOKENS,
  };
}
