import type { PackMessage, TokenCounter } from '../context';
import type { LogPort, ModelCallStore, SummarizerPort } from '../ports';

export interface CondenseDeps {
  summarizer: SummarizerPort;
  calls: ModelCallStore;
  counter: TokenCounter;
  log: LogPort;
  /** TOOL_RESULT_INLINE_TOKENS. */
  inlineTokens: number;
  /** SUMMARY_INPUT_MAX_TOKENS: the largest part of a result one summarizer call reads. */
  inputMaxTokens: number;
}

/** Parts of a huge result the summarizer reads at most; the rest stays readable through read_tool_result. */
const MAX_PARTS = 8;
/** Tokens kept for the header and the handle line around the condensed body. */
const FRAME_TOKENS = 60;
const PROMPT_TOKENS = 300;

const SYSTEM =
  'You condense the output of a tool for an assistant that will only see your version. Keep every identifier (ids, names, codes, file paths, URLs), every number with its unit, and every conclusion, error and warning. Drop repetition and boilerplate. Answer with the condensed text only.';

/** How a condensed result's handle line names the tool that reads the rest (holdsCondensedResult looks for it). */
export const HANDLE_LINE_CALL = 'read any part with read_tool_result(handle="';

/** The line that ends a condensed result: where the full text is. */
export function handleLine(handle: string, characters: number): string {
  return `[Full result: ${characters} characters; ${HANDLE_LINE_CALL}${handle}", offset, length)]`;
}

/** Keeps the transcript bounded: above `maxChars` a result is cut, with a marker saying so. */
export function truncateResult(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  return `${text.slice(0, maxChars)}\n[… truncated: the result had ${text.length} characters; only the first ${maxChars} are kept]`;
}

/** Cuts text to at most `tokens` (a last resort when the summarizer overshoots or fails). */
export function cutToTokens(text: string, tokens: number, counter: TokenCounter): string {
  if (counter.countText(text) <= tokens) return text;
  let cut = text.slice(0, Math.max(1, tokens * 4));
  while (cut.length > 1 && counter.countText(cut) > tokens - 4) cut = cut.slice(0, Math.floor(cut.length * 0.9));
  return `${cut.trimEnd()} […]`;
}

function splitParts(text: string, tokens: number, counter: TokenCounter): { parts: string[]; coveredChars: number } {
  const parts: string[] = [];
  let offset = 0;
  while (offset < text.length && parts.length < MAX_PARTS) {
    let end = Math.min(text.length, offset + tokens * 3);
    while (end > offset + 1 && counter.countText(text.slice(offset, end)) > tokens)
      end = offset + Math.floor((end - offset) * 0.85);
    parts.push(text.slice(offset, end));
    offset = end;
  }
  return { parts, coveredChars: offset };
}

/**
 * What a tool result puts in the context: the text itself when it has at most `inlineTokens` tokens; otherwise
 * a version condensed by the summary model (progressively, part by part, each on top of the notes so far) within
 * that many tokens, ending with the handle to read the rest. A failing summarizer falls back to the head of the
 * text: condensing never fails the call.
 */
export async function condenseToolResult(
  input: { threadId: string; toolName: string; handle: string; text: string; signal?: AbortSignal },
  deps: CondenseDeps,
): Promise<{ content: string; condensed: boolean }> {
  const { counter, inlineTokens } = deps;
  const tokens = counter.countText(input.text);
  if (tokens <= inlineTokens) return { content: input.text, condensed: false };
  const bodyTokens = Math.max(20, inlineTokens - FRAME_TOKENS);
  const partTokens = Math.max(200, deps.inputMaxTokens - bodyTokens - PROMPT_TOKENS);
  const { parts, coveredChars } = splitParts(input.text, partTokens, counter);
  let notes = '';
  try {
    for (const [index, part] of parts.entries()) {
      const messages: PackMessage[] = [
        { role: 'system', content: SYSTEM, tokens: 0 },
        {
          role: 'user',
          content: [
            `Tool: ${input.toolName}. Condense to at most ${bodyTokens} tokens.`,
            notes ? `Your notes on the earlier parts (keep what matters from them):\n${notes}` : '',
            `Part ${index + 1} of ${parts.length}:\n${part}`,
          ]
            .filter(Boolean)
            .join('\n\n'),
          tokens: 0,
        },
      ];
      notes = await callSummarizer(messages, input, deps);
    }
  } catch (error) {
    if (input.signal?.aborted) throw error;
    deps.log.warn(
      { err: error, threadId: input.threadId, tool: input.toolName },
      'condensing a tool result failed; keeping its head instead',
    );
    notes = `[The summary model could not condense this result; its beginning follows]\n${input.text}`;
  }
  const covered = coveredChars < input.text.length ? ` (the first ${coveredChars} characters were condensed)` : '';
  const header = `[Condensed from ${tokens} tokens${covered}]`;
  const content = `${header}\n${cutToTokens(notes, bodyTokens, counter)}\n${handleLine(input.handle, input.text.length)}`;
  return { content, condensed: true };
}

async function callSummarizer(
  messages: PackMessage[],
  input: { threadId: string; signal?: AbortSignal },
  deps: CondenseDeps,
): Promise<string> {
  const started = Date.now();
  const estimated = deps.counter.countPack(messages);
  const result = await deps.summarizer.summarize({ messages, ...(input.signal ? { signal: input.signal } : {}) });
  await deps.calls
    .record({
      threadId: input.threadId,
      messageId: null,
      purpose: 'condense',
      model: deps.summarizer.model,
      estimatedPromptTokens: estimated,
      reportedPromptTokens: result.usage?.promptTokens ?? null,
      reportedCompletionTokens: result.usage?.completionTokens ?? null,
      reportedCachedTokens: result.usage?.cachedTokens ?? null,
      reportedCacheWriteTokens: result.usage?.cacheWriteTokens ?? null,
      latencyMs: Date.now() - started,
    })
    .catch((error: unknown) => deps.log.warn({ err: error }, 'could not record the condense call'));
  const text = result.text.trim();
  if (!text) throw new Error('the summary model returned an empty text');
  return text;
}
