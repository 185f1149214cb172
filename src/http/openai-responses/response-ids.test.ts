import { describe, expect, it } from 'vitest';
import {
  conversationIdOf,
  responseIdKey,
  responseIdOf,
  threadOfConversationId,
  turnOfResponseId,
} from './response-ids';

const key = responseIdKey('an-auth-secret-of-at-least-thirty-two-characters');
const turnId = '0b7f6a2e-3c1d-4e5f-8a9b-0c1d2e3f4a5b';

describe('response ids', () => {
  it('name a turn for the user they were given to, and for no one else', () => {
    const id = responseIdOf(key, 'user-a', turnId);
    expect(id).toMatch(/^resp_[0-9a-f]{65}$/);
    expect(turnOfResponseId(key, 'user-a', id)).toBe(turnId);
    expect(turnOfResponseId(key, 'user-b', id)).toBeNull();
    expect(turnOfResponseId(responseIdKey('another-secret-of-at-least-thirty-two-chars'), 'user-a', id)).toBeNull();
  });

  it("name nothing for a response made with store: false, and can't be turned into a stored one", () => {
    const unstored = responseIdOf(key, 'user-a', turnId, { stored: false });
    expect(turnOfResponseId(key, 'user-a', unstored)).toBeNull();
    const flipped = `${unstored.slice(0, 37)}1${unstored.slice(38)}`;
    expect(flipped).not.toBe(unstored);
    expect(turnOfResponseId(key, 'user-a', flipped)).toBeNull();
  });

  it('refuse a tampered or malformed id', () => {
    const id = responseIdOf(key, 'user-a', turnId);
    const tampered = `${id.slice(0, 10)}${id[10] === 'a' ? 'b' : 'a'}${id.slice(11)}`;
    for (const bad of [tampered, id.slice(0, -1), `${id}0`, 'resp_', 'msg_1', id.toUpperCase(), ''])
      expect(turnOfResponseId(key, 'user-a', bad)).toBeNull();
  });

  it('a conversation id is a thread id and back', () => {
    const threadId = '1a2b3c4d-5e6f-4a1b-8c2d-3e4f5a6b7c8d';
    expect(conversationIdOf(threadId)).toBe('conv_1a2b3c4d5e6f4a1b8c2d3e4f5a6b7c8d');
    expect(threadOfConversationId(conversationIdOf(threadId))).toBe(threadId);
    for (const bad of ['conv_xyz', 'conv_', threadId, `conv_${'0'.repeat(31)}`])
      expect(threadOfConversationId(bad)).toBeNull();
  });
});
