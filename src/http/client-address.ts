import { isIPv4, isIPv6 } from 'node:net';
import type { Request } from 'express';

/** The eight 16-bit groups of an IPv6 address (`::` expanded; an embedded IPv4 tail as two groups). */
function ipv6Groups(address: string): number[] | null {
  const [head = '', tail] = address.split('::') as [string, string | undefined];
  const parse = (part: string): number[] => {
    if (part === '') return [];
    const groups: number[] = [];
    for (const piece of part.split(':')) {
      if (isIPv4(piece)) {
        const [a = 0, b = 0, c = 0, d = 0] = piece.split('.').map(Number);
        groups.push((a << 8) | b, (c << 8) | d);
      } else {
        groups.push(Number.parseInt(piece, 16));
      }
    }
    return groups;
  };
  const left = parse(head);
  const right = tail === undefined ? [] : parse(tail);
  const missing = 8 - left.length - right.length;
  if (missing < 0 || (tail === undefined && missing !== 0)) return null;
  return [...left, ...new Array<number>(missing).fill(0), ...right];
}

/**
 * The key a per-client limit counts by: an IPv4 address as is (IPv4-mapped IPv6 too), an IPv6 address by its /64
 * (one subscriber usually holds a whole /64, so per-/128 limits are free to dodge). Anything else is its own key.
 */
export function clientAddressKey(address: string | undefined): string {
  if (!address) return 'unknown';
  const plain = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  if (isIPv4(plain)) return plain;
  if (!isIPv6(plain)) return plain;
  const groups = ipv6Groups(plain.toLowerCase());
  if (!groups) return plain;
  if (groups.slice(0, 5).every((group) => group === 0) && groups[5] === 0xffff) {
    const [high = 0, low = 0] = groups.slice(6);
    return `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`;
  }
  return `${groups
    .slice(0, 4)
    .map((group) => group.toString(16))
    .join(':')}::/64`;
}

/** The requesting client's key (express' `request.ip`: the client behind a proxy trusted by TRUST_PROXY). */
export function clientKeyOf(request: Request): string {
  return clientAddressKey(request.ip ?? request.socket.remoteAddress);
}
