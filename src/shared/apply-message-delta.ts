/**
 * The client's rule for `message-delta` (docs/realtime.md): `offset` is where `delta` starts in the message's
 * text. A delta the text already covers is dropped, one that overlaps its end adds only the new part, and one
 * that starts beyond the end is a gap: `null` (keep the text; `message-end` brings the whole text, or re-join).
 */
export function applyMessageDelta(text: string, event: { offset: number; delta: string }): string | null {
  if (event.offset > text.length) return null;
  const end = event.offset + event.delta.length;
  if (end <= text.length) return text;
  return text + event.delta.slice(text.length - event.offset);
}
