export type {
  ContextEntry,
  ContextState,
  EncodingName,
  MemoryMode,
  PackMessage,
  RecalledMessage,
  HeldRecallNote,
  Result,
  Role,
  SavedMemoryItem,
  SummaryState,
  ToolCall,
} from './types';
export {
  buildRecallSlot,
  chatCitation,
  defaultRecallTokens,
  mergeRecallCandidates,
  RECALL_ELSEWHERE_HEADING,
  RECALL_END,
  RECALL_HEADING,
  RECALL_LABEL,
} from './build-recall-slot';
export type { RecalledElsewhere } from './build-recall-slot';
export {
  defaultUserMemoryTokens,
  quotedSavedMemory,
  SAVED_MEMORIES_HEADING,
  SAVED_MEMORIES_PREAMBLE,
  savedMemoriesInContext,
  savedMemoriesSection,
  savedMemoryLine,
} from './saved-memories-section';
export {
  budgetOf,
  DEFAULT_RESERVED_OUTPUT_CAP,
  defaultReservedOutputTokens,
  getModelProfile,
  summarizerOutputTokens,
  UNKNOWN_MODEL_PROFILE,
} from './model-profile';
export type { ContextWindow, ModelProfile, ModelProfileOverrides } from './model-profile';
export { DEFAULT_TOOL_RESULT_INLINE_TOKENS, deriveContextDefaults } from './derive-context-defaults';
export type { DerivedContextDefaults } from './derive-context-defaults';
export {
  boundedEncodedLength,
  createTokenCounter,
  encoderFor,
  MAX_ENCODED_PIECE_CHARS,
  REPLY_PRIMING_TOKENS,
  TOKEN_COUNT_CACHE_BOUNDS,
  tokenCountCacheSize,
  tokenizerWork,
  TOKENS_PER_MESSAGE,
  TOKENS_PER_NAME,
  TOKENS_PER_TOOL_CALL,
} from './token-counter';
export type {
  CountableMessage,
  FunctionSchema,
  TokenCounter,
  ToolDefinition,
  ToolParameterSchema,
} from './token-counter';
export {
  DEFAULT_KEEP,
  DEFAULT_SUMMARIZER_INPUT_MAX_TOKENS,
  DEFAULT_SUMMARY_MAX_TOKENS,
  DEFAULT_TRIGGER,
  DEFAULT_TRIGGER_TOKENS,
  formatCondition,
} from './policies';
export type { KeepPolicy, PolicyCondition, TriggerPolicy } from './policies';
export { formatTriggerPolicy, parseTriggerPolicy } from './parse-trigger-policy';
export { parseKeepPolicy } from './parse-keep-policy';
export { FOLD_HEADROOM, validatePolicies } from './validate-policies';
export type { PolicySettings, ValidatedPolicies } from './validate-policies';
export { shouldFold, visibleWindow } from './should-fold';
export { correctedBudget, createEstimateCorrection } from './estimate-correction';
export type { EstimateCorrection, EstimateCorrectionOptions } from './estimate-correction';
export type { FoldDecision } from './should-fold';
export { groupExchangeBlocks } from './group-exchange-blocks';
export { expandPinToExchange } from './expand-pin-to-exchange';
export { planFold } from './plan-fold';
export type { FoldPlan, PlanFoldOptions } from './plan-fold';
export { applyFold } from './apply-fold';
export type { ApplyFoldOptions } from './apply-fold';
export { buildSummarizerInputs } from './build-summarizer-inputs';
export type { BuildSummarizerInputsOptions, SummarizerChunk } from './build-summarizer-inputs';
export {
  DEFAULT_SEGMENT_PROMPT,
  DEFAULT_SUMMARY_PROMPT,
  EARLIER_SUMMARY_CLOSING,
  EARLIER_SUMMARY_OPENING,
  fillSummaryTemplate,
  renderSummaryPrompt,
  renderTranscriptLine,
} from './summary-prompt';
export type { RenderSummaryPromptOptions, SummarizerMessage, SummaryPromptTemplate } from './summary-prompt';
export { checkRetention, extractIdentifiers, mustKeepVerbatim } from './extract-identifiers';
export type { RetentionReport } from './extract-identifiers';
export { filterCitations } from './filter-citations';
export type { FilterCitationsOptions } from './filter-citations';
export { findStaleCounts } from './find-stale-counts';
export {
  CONDENSED_MESSAGE_OPEN,
  condensedMessageMarker,
  condenseOversizedMessage,
  MIN_CONDENSED_MESSAGE_TOKENS,
} from './condense-oversized-message';
export { upperBoundMessageTokens, upperBoundTextTokens } from './measure-message';
export type { MessageMeasure } from './measure-message';
export { MISSING_RESULT_TEXT, renderEntries, SERVER_NOTE_END, SERVER_NOTE_OPEN } from './render-entries';
export { renderStrict, STRICT_OPENING_USER_TEXT } from './render-strict';
export {
  buildContextPack,
  ContextOverBudgetError,
  OMITTED_NOTE_SUMMARY,
  OMITTED_NOTE_WINDOW_ONLY,
  summaryCoverage,
  summaryHeading,
} from './build-context-pack';
export type {
  BuildContextPackOptions,
  ContextPack,
  ContextPackManifest,
  PackTokenParts,
  PackToolResult,
} from './build-context-pack';
export { assertPackValid, validatePackOrdering } from './validate-pack-ordering';
export type { ChatTemplateCompat } from './validate-pack-ordering';
export { MAX_PACK_TOOL_ARGUMENT_CHARS, shortenToolArguments } from './shorten-tool-arguments';
