/**
 * Auto-recall's relevance gate (issue 24): a new recall slot costs its tokens uncached on the call that adds it, and
 * stays in every later pack until the next fold (sticky recall), so a user message gets one only when older messages
 * are likely to add something the pack does not already say. Measured on LoCoMo chats (bench/README.md, "Prompt
 * caching on LoCoMo"): without the gate nine in ten chat turns got a slot of ~1,000 tokens that the conversation in
 * the window already covered.
 *
 * A user message passes when either
 * - it is a short question or request about the past (at most SHORT_QUESTION_WORDS words, ending with "?" or naming
 *   the past: "again", "remind", "earlier", "mentioned"…): how people ask about something said before ("What was my
 *   passport number?", "Tell me the name of the boat again."), whose wording often differs from what was said, so
 *   term overlap alone misses it; or
 * - an older message covers its terms clearly better than anything the pack holds: the best candidate's weighted
 *   share of the message's terms is at least MIN_COVERAGE and exceeds the best window message's (or the summary's)
 *   by MIN_MARGIN. Terms are weighted by how rare they are among the window and the candidates, so words every
 *   message shares (names, greetings) count little.
 */

/** A question of at most this many words always gets a slot. */
export const SHORT_QUESTION_WORDS = 15;
/** The least weighted share of the message's terms the best older message must cover. */
export const MIN_COVERAGE = 0.3;
/** By how much the best older message must cover the message better than the best message the pack holds. */
export const MIN_MARGIN = 0.3;

// Function words and the small talk every chat message shares.
const STOPWORDS = new Set(
  `a an and are as at be been but by can could did do does doing done for from had has have having he her here hers him
his how i if in into is it its just me my myself no nor not now of off on once only or our ours out over own same
she should so some such than that the their theirs them then there these they this those through to too under until
up very was we were what when where which while who whom why will with would you your yours yourself about above
after again against all am any because before below between both down during each few further more most other
ourselves themselves yourselves also really yeah yes oh wow hey thanks thank like get got go going gonna know think
feel lot much many one way well good great awesome amazing cool glad hear sounds`.split(/\s+/),
);

/** The message's content terms: lower-cased words of three or more characters, stop words left out, cut to six characters (a crude stem). */
export function recallTerms(text: string): Set<string> {
  const terms = new Set<string>();
  for (const word of text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) {
    if (word.length < 3 || STOPWORDS.has(word)) continue;
    terms.add(word.slice(0, 6));
  }
  return terms;
}

/** Words by which a message points back at something said before. */
const BACK_REFERENCE =
  /\b(?:again|remind|recall|remember|earlier|before|previously|mentioned|said|told|forgot|forget)\b/i;

function isShortQuestion(text: string): boolean {
  const trimmed = text.trim();
  return (trimmed.endsWith('?') || BACK_REFERENCE.test(trimmed)) && trimmed.split(/\s+/).length <= SHORT_QUESTION_WORDS;
}

/**
 * Whether the newest user message should get a new recall slot: `held` are the texts the pack already holds (the
 * window's other messages, the summary, held recall notes), `candidates` the older messages recall found.
 */
export function recallEarnsItsTokens(input: {
  query: string;
  held: readonly string[];
  candidates: readonly string[];
}): boolean {
  if (input.candidates.length === 0) return false;
  if (isShortQuestion(input.query)) return true;
  const query = recallTerms(input.query);
  if (query.size === 0) return false;
  const held = input.held.map(recallTerms);
  const candidates = input.candidates.map(recallTerms);
  const documents = held.length + candidates.length + 1;
  const frequency = new Map<string, number>();
  for (const terms of [...held, ...candidates])
    for (const term of terms) if (query.has(term)) frequency.set(term, (frequency.get(term) ?? 0) + 1);
  const weight = (term: string): number => Math.log(1 + documents / (1 + (frequency.get(term) ?? 0)));
  let total = 0;
  for (const term of query) total += weight(term);
  const coverage = (terms: ReadonlySet<string>): number => {
    let covered = 0;
    for (const term of query) if (terms.has(term)) covered += weight(term);
    return covered / total;
  };
  const heldBest = Math.max(0, ...held.map(coverage));
  const candidateBest = Math.max(0, ...candidates.map(coverage));
  return candidateBest >= MIN_COVERAGE && candidateBest >= heldBest + MIN_MARGIN;
}
