// Summary citations, as the summarizer writes them: `[#12]`, `[#40–44]`, `[#40-44]`, `[#3, #7–9]`.
const CITATION = /\[#\d+(?:\s*[–-]\s*#?\d+)?(?:\s*,\s*#\d+(?:\s*[–-]\s*#?\d+)?)*\]/g;
const ITEM = /#(\d+)(?:\s*[–-]\s*#?(\d+))?/g;

/** The fragment a citation link points at: `#cite-40-44`. */
export const CITATION_HREF = /^#cite-(\d+)-(\d+)$/;

/** The seq range of a citation link's href, or null for any other link. */
export function citedRange(href: string | undefined): { from: number; through: number } | null {
  const match = href ? CITATION_HREF.exec(href) : null;
  return match ? { from: Number(match[1]), through: Number(match[2]) } : null;
}

/** Rewrites each citation of a Markdown text as links (`[#40–44]` -> `\[[#40–44](#cite-40-44)\]`), the rest untouched. */
export function linkCitations(text: string): string {
  return text.replace(CITATION, (citation) => {
    const links = [...citation.matchAll(ITEM)].map((match) => {
      const first = Number(match[1]);
      const last = match[2] === undefined ? first : Number(match[2]);
      const [from, through] = first <= last ? [first, last] : [last, first];
      return `[#${from === through ? from : `${from}–${through}`}](#cite-${from}-${through})`;
    });
    return `\\[${links.join(', ')}\\]`;
  });
}
