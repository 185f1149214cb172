import { afterEach, describe, expect, it, vi } from 'vitest';
import { SignJWT } from 'jose';
import { createTokenService, groupsOfClaim } from './token-service';

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

  it("reads a host-minted token's spend-limit groups from the configured claim, and only then", async () => {
    const secret = 'a-secret-of-at-least-32-characters-long!';
    const mint = (claims: Record<string, unknown>) =>
      new SignJWT(claims)
        .setProtectedHeader({ alg: 'HS256' })
        .setSubject('host-user')
        .setExpirationTime('1h')
        .sign(new TextEncoder().encode(secret));
    const tokens = createTokenService(secret, { groupClaim: 'groups' });
    expect((await tokens.verify(await mint({ groups: ['pro', ' team ', 'pro'] }))).groups).toEqual(['pro', 'team']);
    expect((await tokens.verify(await mint({ groups: 'pro' }))).groups).toEqual(['pro']);
    // Absent: the token places its user in no group (their claim memberships are removed).
    expect((await tokens.verify(await mint({}))).groups).toEqual([]);
    await expect(tokens.verify(await mint({ groups: 7 }))).rejects.toMatchObject({ code: 'UNAUTHORIZED' });
    // A guest's token (the server's own) never carries groups; without the setting no token does.
    expect((await tokens.verify(await mint({ kind: 'guest', groups: ['pro'] }))).groups).toBeUndefined();
    const plain = createTokenService(secret);
    expect((await plain.verify(await mint({ groups: ['pro'] }))).groups).toBeUndefined();
  });
});

describe('groupsOfClaim', () => {
  it('takes a name or a list of names, bounded, and refuses any other shape', () => {
    expect(groupsOfClaim('groups', undefined)).toEqual([]);
    expect(groupsOfClaim('groups', ['b', 'a'])).toEqual(['a', 'b']);
    for (const bad of [[''], ['x'.repeat(101)], Array.from({ length: 33 }, (_, i) => `g${i}`), [1], { a: 1 }, true])
      expect(() => groupsOfClaim('groups', bad)).toThrow(/groups claim must name at most 32 groups/);
  });
});
