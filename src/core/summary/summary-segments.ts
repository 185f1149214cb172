/**
 * A summary as ordered segments: each fold appends one segment for the span it folded, so the text of the earlier
 * segments, and with it the prompt prefix a provider caches, stays byte-identical until a consolidation rewrites
 * them all. The text is the segments joined by SEGMENT_SEPARATOR; `segmentEnds` are the character offsets where
 * each segment ends (ascending, the last is the text's length), so every reader of the text keeps working.
 */
export interface SegmentedSummary {
  text: string;
  segmentEnds: number[];
}

/** What joins two segments. */
export const SEGMENT_SEPARATOR = '\n\n';

/** The summary consisting of one segment (a consolidation, a rebuild, an admin's edit). */
export function singleSegment(text: string): SegmentedSummary {
  return { text, segmentEnds: text === '' ? [] : [text.length] };
}

/**
 * The segments of a stored summary. Ends that do not describe the text (a summary stored before segments, or a text
 * changed without them) make it one segment.
 */
export function segmentedSummary(text: string, segmentEnds: readonly number[] | null | undefined): SegmentedSummary {
  const ends = segmentEnds ?? [];
  const valid =
    ends.length > 0 &&
    ends.at(-1) === text.length &&
    ends.every((end, index) => end > (index === 0 ? 0 : (ends[index - 1] ?? 0) + SEGMENT_SEPARATOR.length));
  return valid ? { text, segmentEnds: [...ends] } : singleSegment(text);
}

/** The segments' texts, oldest first. */
export function segmentsOf(summary: SegmentedSummary): string[] {
  let start = 0;
  return summary.segmentEnds.map((end) => {
    const segment = summary.text.slice(start, end);
    start = end + SEGMENT_SEPARATOR.length;
    return segment;
  });
}

/** `summary` with `segment` appended; the earlier text is kept byte for byte. An empty segment changes nothing. */
export function appendSegment(summary: SegmentedSummary | null, segment: string): SegmentedSummary {
  const addition = segment.trim();
  if (addition === '') return summary ?? singleSegment('');
  if (!summary || summary.text === '') return singleSegment(addition);
  const text = `${summary.text}${SEGMENT_SEPARATOR}${addition}`;
  return { text, segmentEnds: [...summary.segmentEnds, text.length] };
}

/** `summary` without its segments from index `count` on (what a fold appended, to write it again). */
export function keepSegments(summary: SegmentedSummary, count: number): SegmentedSummary | null {
  if (count <= 0) return null;
  const ends = summary.segmentEnds.slice(0, count);
  const last = ends.at(-1);
  return last === undefined ? null : { text: summary.text.slice(0, last), segmentEnds: ends };
}
