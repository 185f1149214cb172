/**
 * The clientMessageId of a user message the OpenAI route stores: the same message at the same point of the same
 * conversation gets the same id, so a request sent twice (a client's retry after a time-out, a double submit) queues
 * one turn and both wait for its answer (the send's repeated-clientMessageId rule) instead of storing it twice.
 */
export function requestMessageId(input: { kind: 'send' | 'edit'; position: number; content: string }): string {
  return `oa.${input.kind}.${input.position}.${textHash(input.content)}`;
}

/** A 53-bit string hash (cyrb53), hex: enough to tell two messages at one point apart; not a security measure. */
function textHash(text: string): string {
  let first = 0xdeadbeef;
  let second = 0x41c6ce57;
  for (let index = 0; index < text.length; index += 1) {
    const code = text.charCodeAt(index);
    first = Math.imul(first ^ code, 2654435761);
    second = Math.imul(second ^ code, 1597334677);
  }
  first = Math.imul(first ^ (first >>> 16), 2246822507) ^ Math.imul(second ^ (second >>> 13), 3266489909);
  second = Math.imul(second ^ (second >>> 16), 2246822507) ^ Math.imul(first ^ (first >>> 13), 3266489909);
  return (4294967296 * (2097151 & second) + (first >>> 0)).toString(16);
}
