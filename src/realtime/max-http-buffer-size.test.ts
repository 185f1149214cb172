import { describe, expect, it } from 'vitest';
import { maxHttpBufferSize } from './max-http-buffer-size';

function packetBytes(content: string): number {
  const packet = `421${JSON.stringify(['message-send', { threadId: '5f0c8a52-3b8e-4d57-9a8e-1f6a7b9c0d12', content, clientMessageId: 'x'.repeat(100) }])}`;
  return Buffer.byteLength(packet, 'utf8');
}

describe('maxHttpBufferSize', () => {
  const limit = 1000;

  it('fits the largest valid message-send, whatever its characters', () => {
    for (const character of ['a', '\u0001', '"', 'é', '\u4e2d', '\ud800', '😀'.slice(0, 1)]) {
      expect(packetBytes(character.repeat(limit))).toBeLessThanOrEqual(maxHttpBufferSize(limit));
    }
    expect(packetBytes('😀'.repeat(limit / 2))).toBeLessThanOrEqual(maxHttpBufferSize(limit));
  });

  it('stays within a few KB of that largest payload', () => {
    expect(maxHttpBufferSize(limit) - packetBytes('\u0001'.repeat(limit))).toBeLessThan(8192);
    expect(maxHttpBufferSize(32_000)).toBeLessThan(200_000);
  });
});
