/**
 * Text Postgres can store. Its text refuses NUL (`\u0000`) and its jsonb refuses a lone surrogate escape (`"\ud800"`);
 * both reach us in text no client request carried, so nothing could refuse them up front: a model's answer or tool
 * call arguments, an MCP server's or a runner's tool result. Each becomes U+FFFD, the replacement character, as the
 * driver's UTF-8 encoding already does for a lone surrogate in a text column. (Client requests are refused instead:
 * src/http/json-body-checks.ts, the socket schemas.)
 */
export function storableText(text: string): string {
  const wellFormed = (text as string & { toWellFormed(): string }).toWellFormed();
  return wellFormed.includes('\u0000') ? wellFormed.replaceAll('\u0000', '\uFFFD') : wellFormed;
}

/** A JSON value whose strings and keys are {@link storableText}. */
export function storableJson<T>(value: T): T {
  if (typeof value === 'string') return storableText(value) as T;
  if (Array.isArray(value)) return value.map((item) => storableJson(item)) as T;
  if (value !== null && typeof value === 'object' && !(value instanceof Date)) {
    const copy: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) copy[storableText(key)] = storableJson(item);
    return copy as T;
  }
  return value;
}
