import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/test-app';

describe('HTTP security', () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp({ env: { CORS_ORIGINS: 'https://chat.example.com' } });
  });
  afterAll(async () => {
    await app?.stop();
  });

  it('sends security headers and no framework banner', async () => {
    const response = await app.api('/healthz');
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    expect(response.headers.get('x-frame-options')).toBe('SAMEORIGIN');
    expect(response.headers.get('content-security-policy')).toContain("default-src 'self'");
    expect(response.headers.get('x-powered-by')).toBeNull();
    expect(response.headers.get('x-request-id')).toMatch(/^[\w-]+$/);
  });

  it('allows CORS only for configured origins', async () => {
    const allowed = await app.api('/api/info', { headers: { Origin: 'https://chat.example.com' } });
    expect(allowed.headers.get('access-control-allow-origin')).toBe('https://chat.example.com');
    const refused = await app.api('/api/info', { headers: { Origin: 'https://evil.example.net' } });
    expect(refused.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('answers unknown routes with the JSON error shape, after authentication', async () => {
    expect((await app.api('/api/nope')).status).toBe(401);
    const { token } = await app.guest();
    const response = await app.api('/api/nope', { token });
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({ error: { code: 'NOT_FOUND', message: 'No such route.' } });
  });
});
