// Spend limits of service keys (issue 35): a key's limit covers all of its end users together (an account every one
// of them spends from), refused on /v1 as OpenAI's insufficient_quota; another key's users are not affected.
import { APIError } from 'openai';
import { describe, expect, it } from 'vitest';
import type { SpendLimitsDto } from '../../src/shared/admin-api';
import { serviceKeyId } from '../../src/http/openai-facade/facade-principal';
import { useChatServer } from '../support/chat-server';
import { chatRequests, openaiClient, SERVICE_KEY } from '../facade/facade-kit';

const ADMIN_TOKEN = 'test-admin-token-0123456789';
const OTHER_KEY = 'facade-test-other-service-key-fedcba9876543210';

async function json<T>(response: Response, status: number): Promise<T> {
  const text = await response.text();
  expect(response.status, text).toBe(status);
  return (text ? JSON.parse(text) : null) as T;
}

describe('the spend limit of a service key', () => {
  // No default limit: only the key's own limit can refuse anyone here.
  const server = useChatServer({
    env: {
      OPENAI_FACADE_KEYS: `${SERVICE_KEY},${OTHER_KEY}`,
      SPEND_LIMITS: 'on',
      CONTEXT_MAX_INPUT_TOKENS: '3000',
      RESERVED_OUTPUT_TOKENS: '300',
    },
  });
  const admin = (path: string, init: RequestInit & { json?: unknown } = {}) =>
    server.app.api(path, { ...init, token: ADMIN_TOKEN });
  const send = (key: string, endUser: string, content: string) =>
    openaiClient(server, { apiKey: key, headers: { 'X-User-Id': endUser } })
      .chat.completions.create({ model: 'gpt-4o-mini', messages: [{ role: 'user', content }] })
      .catch((error: unknown) => error);

  it('lets two end users of one key together meet its limit, while a user of another key goes on', async () => {
    const keyId = serviceKeyId(SERVICE_KEY);
    const listed = await json<SpendLimitsDto>(await admin('/api/admin/spend-limits'), 200);
    expect(listed.serviceKeys).toEqual(
      [keyId, serviceKeyId(OTHER_KEY)]
        .sort()
        .map((id) => ({ keyId: id, configured: true, limit: null, updatedAt: null })),
    );
    await json(
      await admin('/api/admin/spend-limits/service-keys/0000000000000000', {
        method: 'PUT',
        json: { limit: '1000tokens/day' },
      }),
      404,
    );

    // Room for one send's worst case and no more: what the first end user spends leaves too little for the second.
    const hold = server.app.application.spend!.holdAmount().tokens;
    const limit = `${hold + 1}tokens/day`;
    expect(
      await json(await admin(`/api/admin/spend-limits/service-keys/${keyId}`, { method: 'PUT', json: { limit } }), 200),
    ).toEqual({ keyId, limit });

    expect(await send(SERVICE_KEY, 'alice', 'first end user')).not.toBeInstanceOf(Error);
    const refused = await send(SERVICE_KEY, 'bob', 'second end user');
    expect(refused).toBeInstanceOf(APIError);
    expect(refused).toMatchObject({ status: 429, type: 'insufficient_quota', code: 'insufficient_quota' });
    expect((refused as APIError).message).toContain(`application's (all its users together) spend limit of`);
    expect((refused as APIError).headers?.get('x-should-retry')).toBe('false');
    expect(chatRequests(server)).toHaveLength(1);

    // Another key's end user (nothing spent on that key) is not held to it.
    expect(await send(OTHER_KEY, 'bob', 'another key')).not.toBeInstanceOf(Error);
    expect(chatRequests(server)).toHaveLength(2);

    const after = await json<SpendLimitsDto>(await admin('/api/admin/spend-limits'), 200);
    expect(after.serviceKeys.find((entry) => entry.keyId === keyId)).toMatchObject({ limit, configured: true });
    const audit = await json<{ entries: { action: string; details: unknown }[] }>(
      await admin('/api/admin/audit?limit=50'),
      200,
    );
    expect(audit.entries.map((entry) => entry.action)).toContain('spend-limit.service-key-set');

    // Removing the limit lets the key's second end user through.
    await json(await admin(`/api/admin/spend-limits/service-keys/${keyId}`, { method: 'DELETE' }), 204);
    expect(await send(SERVICE_KEY, 'bob', 'second end user again')).not.toBeInstanceOf(Error);
  });
});
