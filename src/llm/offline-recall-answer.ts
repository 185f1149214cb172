/**
 * The offline model's use of recall: asked about something said earlier ("what was my budget?"), it finds the
 * message of its context that best answers it — a message auto-recall brought back (the recall slot) or one of the
 * window — and quotes it with its seq. Word overlap, deterministic; no model involved.
 */
import { HumanMessage, type BaseMessage } from '@langchain/core/messages';
import { OFFLINE_ANSWER_PREFIX, RECALL_END, RECALL_HEADING } from '../core/context/build-recall-slot.js';
import { SERVER_NOTE_OPEN } from '../core/context/render-entries.js';

/** Where a window message's transcript seq travels on its LangChain message (never sent to a provider). */
export const TRANSCRIPT_SEQ_KEY = 'transcriptSeq';

/** A message the offline model may quote. */
export interface QuotableMessage {
  seq: number;
  role: string;
  text: string;
  source: 'recalled' | 'window';
}

const RECALLED_LINE = /^\[#(\d+) · (\w+) · [^\]]*\] ?(.*)$/;
const QUESTION_START =
  /^\s*(?:what|which|when|where|who|whom|whose|how|why|did|do|does|was|were|is|are|can|could|remind|recall|tell me|have i|had i)\b/i;
/** Asking about the past in a sentence that is not phrased as a question: "Please remind me what my budget was." */
const ASKS_TO_RECALL = /\b(?:remind me|do you remember|recall)\b/i;
const STOP_WORDS = new Set(
  (
    'a an the and or but if then so of to in on at by for with from about as into over under again is are was were be been being am ' +
    'do does did doing have has had having i me my mine myself we our ours you your yours he him his she her it its they them their ' +
    'this that these those there here what which who whom whose when where why how all any some no not nor only own same than too very ' +
    'can could will would shall should may might must just also please remind remember recall tell told say said gave give given ' +
    'again earlier before ago once know let us one thing things something anything yes ok okay thanks thank'
  ).split(' '),
);

function stem(word: string): string {
  const bare = word.replace(/'s$/, '');
  if (bare.length > 5 && bare.endsWith('ing')) return bare.slice(0, -3);
  if (bare.length > 4 && bare.endsWith('ed')) return bare.slice(0, -2);
  if (bare.length > 4 && bare.endsWith('es')) return bare.slice(0, -2);
  if (bare.length > 3 && bare.endsWith('s') && !bare.endsWith('ss')) return bare.slice(0, -1);
  return bare;
}

/** The distinct content words of a text, stemmed. */
export function contentTerms(text: string): Set<string> {
  const words = text
    .toLowerCase()
    .split(/[^\p{L}\p{N}']+/u)
    .filter((word) => word.length > 0);
  return new Set(words.filter((word) => !STOP_WORDS.has(word) && (word.length > 2 || /\d/.test(word))).map(stem));
}

/** The messages of the recall slot (user-level text under RECALL_HEADING, closed by RECALL_END), with their seqs. */
function recalledMessages(messages: readonly BaseMessage[]): QuotableMessage[] {
  const slot = messages.find((message) => message.text.includes(RECALL_HEADING));
  if (!slot) return [];
  const found: QuotableMessage[] = [];
  const text = slot.text.slice(slot.text.indexOf(RECALL_HEADING));
  for (const line of text.split('\n').slice(1)) {
    if (line === RECALL_END) break;
    const header = RECALLED_LINE.exec(line);
    if (header) found.push({ seq: Number(header[1]), role: header[2]!, text: header[3] ?? '', source: 'recalled' });
    // The user's other chats (cross-thread recall) follow under their own heading: not this conversation's seqs.
    else if (line.startsWith('## ') || line.startsWith('[chat:')) break;
    else if (found.length > 0) found[found.length - 1]!.text += `\n${line.replace(/^ {2}/, '')}`;
  }
  return found;
}

/** A message's text without the recall slot (RECALL_HEADING through RECALL_END), wherever the slot sits in it. */
function withoutRecallSlot(text: string): string {
  const start = text.indexOf(RECALL_HEADING);
  if (start === -1) return text;
  const end = text.indexOf(RECALL_END, start);
  return `${text.slice(0, start)}${end === -1 ? '' : text.slice(end + RECALL_END.length)}`.trim();
}

/**
 * The user's newest message: the last human message that is neither the recall slot nor a server note (both are
 * user-level text the server adds). In a strict pack the recall slot joined that message (after its text): it is cut out.
 */
export function newestUserMessage(
  messages: readonly BaseMessage[],
): { message: BaseMessage; index: number } | undefined {
  for (let index = messages.length - 1; index >= 0; index -= 1) {
    const message = messages[index]!;
    if (message.type !== 'human') continue;
    const text = withoutRecallSlot(message.text);
    if (text === '' || text.startsWith(SERVER_NOTE_OPEN) || text.startsWith('[Server note]')) continue;
    return {
      message:
        text === message.text
          ? message
          : new HumanMessage({ content: text, additional_kwargs: message.additional_kwargs }),
      index,
    };
  }
  return undefined;
}

function roleOf(message: BaseMessage): string {
  return message.type === 'human' ? 'user' : message.type === 'ai' ? 'assistant' : message.type;
}

/** Window messages that carry their seq (set by toLangChainMessage), but not the question itself. */
function windowMessages(messages: readonly BaseMessage[], question: BaseMessage): QuotableMessage[] {
  return messages.flatMap((message) => {
    const seq = message.additional_kwargs?.[TRANSCRIPT_SEQ_KEY];
    if (
      message === question ||
      typeof seq !== 'number' ||
      message.type === 'system' ||
      message.text.startsWith(SERVER_NOTE_OPEN)
    )
      return [];
    if (seq === question.additional_kwargs?.[TRANSCRIPT_SEQ_KEY]) return [];
    return [{ seq, role: roleOf(message), text: message.text, source: 'window' as const }];
  });
}

/**
 * The context message that best answers a question about the past, or null when the user message is not such a
 * question or nothing matches at least half of its content words. Statements beat questions, the user's own words
 * beat answers, and the later message wins a tie (a budget said twice: the newest figure).
 */
export function bestRecalledAnswer(
  messages: readonly BaseMessage[],
  question: BaseMessage | undefined,
): QuotableMessage | null {
  if (
    !question ||
    !(question.text.includes('?') || QUESTION_START.test(question.text) || ASKS_TO_RECALL.test(question.text))
  )
    return null;
  const wanted = contentTerms(question.text);
  if (wanted.size === 0) return null;
  const needed = Math.max(1, Math.ceil(wanted.size / 2));
  const candidates = [...recalledMessages(messages), ...windowMessages(messages, question)].filter(
    (candidate) => candidate.text.trim().length > 0 && !candidate.text.startsWith(OFFLINE_ANSWER_PREFIX),
  );
  let best: { candidate: QuotableMessage; rank: number[] } | null = null;
  for (const candidate of candidates) {
    const terms = contentTerms(candidate.text);
    const matched = [...wanted].filter((term) => terms.has(term)).length;
    if (matched < needed) continue;
    const rank = [
      matched,
      candidate.text.trim().endsWith('?') ? 0 : 1,
      candidate.role === 'user' ? 1 : 0,
      candidate.seq,
    ];
    if (!best || compareRanks(rank, best.rank) > 0) best = { candidate, rank };
  }
  return best?.candidate ?? null;
}

function compareRanks(left: number[], right: number[]): number {
  for (let index = 0; index < left.length; index += 1) {
    const difference = (left[index] ?? 0) - (right[index] ?? 0);
    if (difference !== 0) return difference;
  }
  return 0;
}
