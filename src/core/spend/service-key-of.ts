/** A service key's id: the short hash of the key (16 hex digits) its end users' ids carry. */
export const SERVICE_KEY_ID = /^[0-9a-f]{16}$/;

const SERVICE_USER = /^svc-([0-9a-f]{16}):/;

/**
 * The service key a user acts through, by their id (`svc-<keyId>:<end user>`, see the /v1 facade's serviceUserId);
 * null for any other user. Its limit covers all of the key's end users together.
 */
export function serviceKeyOf(userId: string): string | null {
  return SERVICE_USER.exec(userId)?.[1] ?? null;
}
