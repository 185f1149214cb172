import { z } from 'zod';
import type { TokenCounter } from '../../context';
import type { ElsewhereMatch, TranscriptMatch } from '../../ports';
import { chatCitation } from '../../context/build-recall-slot';
import { cutToTokens } from '../condense-tool-result';
import type { RecallScope } from '../../domain/types';
import { defineTool } from '../types';
import type { OpenAIFunctionTool } from '../../context/types';

/** Tokens kept for the header line and the per-match framing. */
const HEADER_TOKENS = 60;
/** A match shorter than this (characters) is shown with the turn before it: a bare "yes, 4000" needs its question. */
const SHORT_MATCH_CHARS = 160;
/** The neighbouring turn shown for context is cut to this many tokens. */
const NEIGHBOUR_TOKENS = 60;

/** One match as the model reads it: `#seq · role · time: text`. */
export function formatMatch(match: TranscriptMatch, text: string): string {
  return `#${match.seq} · ${match.role} · ${match.createdAt.toISOString().slice(0, 16).replace('T', ' ')}: ${text}`;
}

/** Matches rendered best first, each within an equal share of `tokens`, neighbours indented under their match. */
export function renderMatches(input: {
  query: string;
  matches: TranscriptMatch[];
  neighbours: Map<number, TranscriptMatch>;
  tokens: number;
  counter: TokenCounter;
}): string {
  const { matches, neighbours, counter } = input;
  if (matches.length === 0) return `No message of this conversation matches "${input.query}".`;
  const header = `${matches.length} message(s) of this conversation matching "${input.query}", best first (cite them as [#seq]):`;
  const share = Math.max(30, Math.floor((input.tokens - HEADER_TOKENS) / matches.length));
  const lines = [header];
  for (const match of matches) {
    const neighbour = neighbours.get(match.seq);
    const room = neighbour ? share - NEIGHBOUR_TOKENS : share;
    if (neighbour)
      lines.push(
        `  (before it) ${formatMatch(neighbour, cutToTokens(neighbour.content, NEIGHBOUR_TOKENS - 20, counter))}`,
      );
    lines.push(formatMatch(match, cutToTokens(match.content, Math.max(20, room - 20), counter)));
  }
  return lines.join('\n');
}

/** Matches of the user's other chats, after this conversation's: each with its chat, cited [chat:<id>#seq]. */
export function renderElsewhere(input: { matches: ElsewhereMatch[]; tokens: number; counter: TokenCounter }): string {
  if (input.matches.length === 0) return '';
  const share = Math.max(30, Math.floor((input.tokens - HEADER_TOKENS) / input.matches.length));
  const lines = [
    `${input.matches.length} message(s) of the user's other chats, best first (cite them as [chat:<id>#seq]):`,
  ];
  for (const match of input.matches) {
    const text = cutToTokens(match.content, Math.max(20, share - 30), input.counter);
    lines.push(
      `${chatCitation(match.threadId, match.seq)} chat "${match.threadTitle}" · ${match.role} · ${match.createdAt.toISOString().slice(0, 16).replace('T', ' ')}: ${text}`,
    );
  }
  return lines.join('\n');
}

const SEARCH_TRANSCRIPT = 'search_transcript';

/** What search_transcript tells the model it searches, by the thread's recall scope (issue 27). */
export function searchTranscriptDescription(scope: RecallScope): string {
  return scope === 'user'
    ? "Searches what was said earlier in this conversation (also what the summary left out) and in the user's other chats: the best matches with their numbers ([#seq] here, [chat:<id>#seq] in another chat). Use it for something said before that is not in your context."
    : 'Searches what was said earlier in this conversation (also what the summary left out), and only this conversation (the user chose so): the best matches with their numbers ([#seq]). Use it for something said before that is not in your context.';
}

/** search_transcript's description in small windows (see shortToolSchema), for a thread's recall scope. */
export function shortSearchTranscriptDescription(scope: RecallScope): string {
  return scope === 'user'
    ? "Searches earlier messages of this chat and the user's other chats, with their numbers."
    : 'Searches earlier messages of this chat only, with their numbers.';
}

/**
 * The offered tools of a thread whose recall scope is `scope`: search_transcript's description says which chats it
 * searches (the rest as given). A thread's list changes only when its scope does.
 */
export function definitionsForRecallScope(
  definitions: readonly OpenAIFunctionTool[],
  scope: RecallScope,
): OpenAIFunctionTool[] {
  return definitions.map((definition) =>
    definition.function.name === SEARCH_TRANSCRIPT
      ? {
          ...definition,
          function: {
            ...definition.function,
            // Offered short (a small window), it stays short.
            description:
              definition.function.description === shortSearchTranscriptDescription('user')
                ? shortSearchTranscriptDescription(scope)
                : searchTranscriptDescription(scope),
          },
        }
      : definition,
  );
}

/**
 * Searches the whole transcript of the conversation (what the summary left out included), from the thread's
 * context start on, and with the recall scope `user` the user's other chats (never the chat's fork family).
 * Best matches first, each with its seq, role and time; a short match comes with the turn before it. Bounded to
 * TOOL_RESULT_INLINE_TOKENS, so never condensed. Its registered description is the `user` scope's; a thread's
 * offered list says its own scope (definitionsForRecallScope).
 */
export const searchTranscriptTool = defineTool({
  name: SEARCH_TRANSCRIPT,
  description: searchTranscriptDescription('user'),
  shortDescription: shortSearchTranscriptDescription('user'),
  schema: z.object({
    query: z.string().trim().min(1).max(500).describe('Words to look for, e.g. "budget trip Lisbon"'),
    limit: z.number().int().min(1).max(20).default(5).describe('How many matches to return (default 5)'),
    beforeSeq: z.number().int().min(1).optional().describe('Only messages before this message number'),
  }),
  mode: 'inline',
  condense: false,
  timeoutMs: 5000,
  async run({ query, limit, beforeSeq }, context) {
    const search = context.services.search;
    const matches = await search.searchForModel({
      threadId: context.threadId,
      query,
      limit,
      ...(beforeSeq !== undefined ? { beforeSeq } : {}),
    });
    const found = new Set(matches.map((match) => match.seq));
    const wanted = matches
      .filter((match) => match.content.length < SHORT_MATCH_CHARS && !found.has(match.seq - 1))
      .map((match) => match.seq - 1);
    const before = await search.messagesAt({ threadId: context.threadId, seqs: wanted });
    const neighbours = new Map(before.map((message) => [message.seq + 1, message]));
    // Before a beforeSeq (a look back in this conversation), the other chats are not asked.
    const elsewhere =
      beforeSeq === undefined && search.searchElsewhere
        ? await search.searchElsewhere({ threadId: context.threadId, query, limit: Math.min(limit, 5) })
        : [];
    const ownTokens = elsewhere.length > 0 ? Math.floor(context.inlineTokens * 0.6) : context.inlineTokens;
    const own = renderMatches({ query, matches, neighbours, tokens: ownTokens, counter: context.counter });
    const others = renderElsewhere({
      matches: elsewhere,
      tokens: context.inlineTokens - ownTokens,
      counter: context.counter,
    });
    return others === '' ? own : `${own}\n${others}`;
  },
});
