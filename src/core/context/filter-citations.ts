// `[#12]`, `[#40–44]`, `[#40-44]`, `[#3, #7–9]`.
const CITATION = /\s?\[#\d+(?:\s*[–-]\s*#?\d+)?(?:\s*,\s*#\d+(?:\s*[–-]\s*#?\d+)?)*\]/g;
const ITEM = /#(\d+)(?:\s*[–-]\s*#?(\d+))?/g;

export interface FilterCitationsOptions {
  summary: string;
  /** First seq the summary covers (the context start). */
  fromSeq: number;
  /** Last seq the summary covers. */
  throughSeq: number;
}

/**
 * Removes citations of seqs the summary does not cover (a model may invent them). A range reaching outside is
 * clamped to the covered part; a citation with nothing left is removed with the space before it.
 */
export function filterCitations(options: FilterCitationsOptions): string {
  const { fromSeq, throughSeq } = options;
  return options.summary.replace(CITATION, (citation) => {
    const items: string[] = [];
    for (const match of citation.matchAll(ITEM)) {
      const first = Number(match[1]);
      const last = match[2] === undefined ? first : Number(match[2]);
      const from = Math.max(fromSeq, Math.min(first, last));
      const through = Math.min(throughSeq, Math.max(first, last));
      if (from > through) continue;
      items.push(from === through ? `#${from}` : `#${from}–${through}`);
    }
    if (items.length === 0) return '';
    return `${/^\s/.test(citation) ? citation.charAt(0) : ''}[${items.join(', ')}]`;
  });
}
