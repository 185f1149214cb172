import { afterEach, describe, expect, it, vi } from 'vitest';
import { createTokenService } from './token-service';

describe('token verification', () => {
  afterEach(() => vi.useRealTimers());

  it('accepts a token it verified before without verifying it again, until the token expires', async () => {
    const tokens = createTokenService('a-secret-of-at-least-32-characters-long!');
    const token = await tokens.sign({ userId: 'u1', kind: 'external' }, 60);
    const first = await tokens.verify(token);
    expect(first).toMatchObject({ userId: 'u1', role: 'user', kind: 'external' });
    expect(await tokens.verify(token)).toBe(first);

    vi.useFakeTimers({ now: first.expiresAt + 1000, toFake: ['Date'] });
    await expect(tokens.verify(token)).rejects.toMatchObject({
      code: 'UNAUTHORIZED',
      message: 'The token has expired.',
    });
  });

  it('never accepts a token signed with another secret, remembered or not', async () => {
    const ours = createTokenService('a-secret-of-at-least-32-characters-long!');
    const theirs = createTokenService('another-secret-of-at-least-32-characters');
    const forged = await theirs.sign({ userId: 'admin', role: 'admin', kind: 'external' }, 60);
    await theirs.verify(forged);
    await expect(ours.verify(forged)).rejects.toMatchObject({ code: 'UNAUTHORIZED' });
    await expect(ours.verify(forged)).rejects.toMatchObject({ code: 'UNAUTHORIZED' });
  });
});
