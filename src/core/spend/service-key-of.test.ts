import { describe, expect, it } from 'vitest';
import { serviceKeyOf } from './service-key-of';

describe('serviceKeyOf', () => {
  it("names the key of a service key's end user, and no key for anyone else", () => {
    expect(serviceKeyOf('svc-0123456789abcdef:alice')).toBe('0123456789abcdef');
    expect(serviceKeyOf('svc-0123456789abcdef:svc-fedcba9876543210:x')).toBe('0123456789abcdef');
    expect(serviceKeyOf('guest-1234')).toBeNull();
    expect(serviceKeyOf('svc-0123:alice')).toBeNull();
    expect(serviceKeyOf('user-svc-0123456789abcdef:alice')).toBeNull();
  });
});
