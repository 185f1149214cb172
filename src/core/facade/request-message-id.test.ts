import { describe, expect, it } from 'vitest';
import { requestMessageId } from './request-message-id';

describe('requestMessageId', () => {
  it('is the same for the same message at the same point, and a valid clientMessageId', () => {
    const id = requestMessageId({ kind: 'send', position: 4, content: 'hello there' });
    expect(id).toBe(requestMessageId({ kind: 'send', position: 4, content: 'hello there' }));
    expect(id).toMatch(/^[A-Za-z0-9_.:-]{1,100}$/);
  });

  it('differs by kind, position and text', () => {
    const ids = new Set([
      requestMessageId({ kind: 'send', position: 4, content: 'hello there' }),
      requestMessageId({ kind: 'edit', position: 4, content: 'hello there' }),
      requestMessageId({ kind: 'send', position: 6, content: 'hello there' }),
      requestMessageId({ kind: 'send', position: 4, content: 'hello therE' }),
      requestMessageId({ kind: 'send', position: 4, content: 'x'.repeat(50_000) }),
    ]);
    expect(ids.size).toBe(5);
  });
});
