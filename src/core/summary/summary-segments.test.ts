import { describe, expect, it } from 'vitest';
import {
  appendSegment,
  keepSegments,
  segmentedSummary,
  segmentsOf,
  SEGMENT_SEPARATOR,
  singleSegment,
} from './summary-segments';

describe('summary segments', () => {
  it('appends a segment after the earlier text, byte for byte, and reads the segments back', () => {
    const first = appendSegment(null, '  Intent: a trip to Rome [#1–4].\n\nFacts: budget €900 [#3].  ');
    expect(first).toEqual({
      text: 'Intent: a trip to Rome [#1–4].\n\nFacts: budget €900 [#3].',
      segmentEnds: [first.text.length],
    });
    const second = appendSegment(first, 'Booked hotel H-204 [#5].');
    expect(second.text.startsWith(first.text + SEGMENT_SEPARATOR)).toBe(true);
    // A segment holding the separator itself still reads back whole: the ends, not the separator, delimit it.
    expect(segmentsOf(second)).toEqual([
      'Intent: a trip to Rome [#1–4].\n\nFacts: budget €900 [#3].',
      'Booked hotel H-204 [#5].',
    ]);
    expect(appendSegment(second, '   ')).toBe(second);
  });

  it('reads stored ends that do not describe the text as one segment (a summary stored before segments)', () => {
    expect(segmentedSummary('old summary', [])).toEqual(singleSegment('old summary'));
    expect(segmentedSummary('old summary', [3, 99])).toEqual(singleSegment('old summary'));
    expect(segmentedSummary('ab\n\ncd', [2, 6])).toEqual({ text: 'ab\n\ncd', segmentEnds: [2, 6] });
    expect(segmentedSummary('', null)).toEqual({ text: '', segmentEnds: [] });
  });

  it('keeps the first segments of a summary (what a re-ask writes after)', () => {
    const summary = appendSegment(appendSegment(appendSegment(null, 'one'), 'two'), 'three');
    expect(keepSegments(summary, 2)).toEqual({ text: 'one\n\ntwo', segmentEnds: [3, 8] });
    expect(keepSegments(summary, 0)).toBeNull();
  });
});
