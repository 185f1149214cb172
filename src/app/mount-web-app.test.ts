import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mountWebApp } from './mount-web-app';

describe('mountWebApp', () => {
  let dir: string;
  let server: Server;
  let base: string;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'web-dist-'));
    await mkdir(path.join(dir, 'assets'));
    await writeFile(path.join(dir, 'index.html'), '<!doctype html><title>app</title>');
    await writeFile(path.join(dir, 'assets', 'index-abc.js'), 'console.log(1)');
    const app = express();
    app.get('/api/threads', (_request, response) => {
      response.json({ api: true });
    });
    mountWebApp(dir)(app);
    app.use((_request, response) => {
      response.status(404).json({ error: { code: 'NOT_FOUND', message: 'nope' } });
    });
    await new Promise<void>((resolve) => {
      server = app.listen(0, '127.0.0.1', () => resolve());
    });
    const address = server.address();
    base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
    await rm(dir, { recursive: true, force: true });
  });

  it('answers the app routes with index.html, never cached', async () => {
    for (const route of ['/', '/threads/0b4a1d9e-3c39-4f1e-9a57-1f1d1b0c2a11', '/admin', '/admin/threads/x']) {
      const response = await fetch(`${base}${route}`);
      expect(response.status, route).toBe(200);
      expect(response.headers.get('cache-control')).toBe('no-cache');
      expect(await response.text()).toContain('<title>app</title>');
    }
  });

  it('serves hashed assets with a long cache and leaves the API and unknown paths alone', async () => {
    const asset = await fetch(`${base}/assets/index-abc.js`);
    expect(asset.status).toBe(200);
    expect(asset.headers.get('cache-control')).toContain('immutable');
    expect(await (await fetch(`${base}/api/threads`)).json()).toEqual({ api: true });
    expect((await fetch(`${base}/admin/jobs`)).status).toBe(404);
    expect((await fetch(`${base}/nothing-here`)).status).toBe(404);
  });
});
