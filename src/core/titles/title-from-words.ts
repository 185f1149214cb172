/** Words an automatic title keeps at most. */
export const TITLE_MAX_WORDS = 6;
/** Characters an automatic title keeps at most (a sidebar line). */
export const TITLE_MAX_CHARS = 60;

/** Markdown and code that say nothing as a title: fences, inline code marks, links' targets, images, emphasis. */
function plainText(text: string): string {
  return text
    .replace(/```[\s\S]*?(```|$)/g, ' ')
    .replace(/!\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/https?:\/\/\S+/g, ' ')
    .replace(/[`*_~#>|]+/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

/** Words a title does not end on ("Plan a trip to" reads cut off): English articles, prepositions, conjunctions. */
const DANGLING = new Set(
  'a an the to of in on at for with from by about and or but my your our their its this that'.split(' '),
);

/**
 * `text` made a title line: at most `maxWords` words and TITLE_MAX_CHARS characters (cut at a word), not ending on
 * an article or preposition, without surrounding quotes or trailing punctuation, its first letter upper-case. Empty
 * when nothing is left.
 */
export function finishTitle(text: string, maxWords = TITLE_MAX_WORDS): string {
  const words = plainText(text).split(' ').filter(Boolean).slice(0, maxWords);
  while (words.length > 2 && DANGLING.has(words.at(-1)!.toLowerCase())) words.pop();
  let title = '';
  for (const word of words) {
    const next = title ? `${title} ${word}` : word;
    if (next.length > TITLE_MAX_CHARS) {
      if (!title) title = word.slice(0, TITLE_MAX_CHARS);
      break;
    }
    title = next;
  }
  title = title
    .replace(/^["'“”‘’«»¿¡\s]+/u, '')
    .replace(/["'“”‘’«»\s]+$/u, '')
    .replace(/[\s.,;:!?…\-–—。，、！？：；]+$/u, '')
    .replace(/["'“”‘’«»\s]+$/u, '');
  return title ? title.charAt(0).toUpperCase() + title.slice(1) : '';
}

/**
 * A chat's title from its first message's words (the offline model's, and the fallback when the model's title is
 * unusable): the first TITLE_MAX_WORDS words of its first sentence-ish line, markdown and links left out, e.g.
 * "can you help me plan a team offsite in Lisbon next spring?" → "Can you help me plan".
 */
export function titleFromWords(text: string): string {
  const firstLine =
    text
      .replace(/```[\s\S]*?(```|$)/g, '\n')
      .split('\n')
      .map((line) => plainText(line))
      .find((line) => /[\p{L}\p{N}]/u.test(line)) ?? '';
  return finishTitle(firstLine);
}
