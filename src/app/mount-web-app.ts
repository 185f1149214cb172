import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import express, { type Express } from 'express';

/** Where `vite build` writes the browser app. */
export const WEB_DIST_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../web/dist');

/** Client-side routes answered with index.html (the app routes itself); everything else stays a 404. */
const APP_ROUTES = ['/', '/new', '/threads/:id', '/admin', '/admin/threads/:id'];

/**
 * Serves the built browser app: hashed assets cached for a year, index.html never cached, and the SPA
 * fallback only for the app's own routes, so /api, /healthz and /admin/jobs are never shadowed.
 * Pass it as `mountStatic` to createApplication (it runs after the API routes).
 */
export function mountWebApp(distDir = WEB_DIST_DIR): (app: Express) => void {
  return (app) => {
    const indexFile = path.join(distDir, 'index.html');
    app.use(
      '/assets',
      express.static(path.join(distDir, 'assets'), { immutable: true, maxAge: '365d', fallthrough: true }),
    );
    app.use(express.static(distDir, { index: false, maxAge: 0 }));
    // Browsers and tools still ask for /favicon.ico whatever the page links: the same icon, never a 404.
    app.get('/favicon.ico', (_request, response, next) => {
      const icon = path.join(distDir, 'favicon.svg');
      if (!existsSync(icon)) {
        next();
        return;
      }
      response.type('image/svg+xml').setHeader('Cache-Control', 'public, max-age=86400');
      response.sendFile(icon);
    });
    app.get(APP_ROUTES, (_request, response) => {
      if (!existsSync(indexFile)) {
        response
          .status(503)
          .type('text/plain')
          .send('The browser app is not built: run `npm run build:web` (npm start does it for you).');
        return;
      }
      response.setHeader('Cache-Control', 'no-cache');
      response.sendFile(indexFile);
    });
  };
}
