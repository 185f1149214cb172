import { randomUUID } from 'node:crypto';
import cors from 'cors';
import express, { type Express } from 'express';
import helmet from 'helmet';
import { mountAdmin } from './admin/mount-admin';
import { authenticate } from './authenticate';
import { errorMiddleware, notFoundHandler } from './error-middleware';
import { healthRoutes } from './health-routes';
import type { HttpDeps } from './http-deps';
import { authRoutes } from './routes/auth-routes';
import { contextRoutes } from './routes/context-routes';
import { messageRoutes } from './routes/message-routes';
import { threadRoutes } from './routes/thread-routes';
import { toolRunRoutes } from './routes/tool-run-routes';

/** The express app: security headers, CORS to configured origins, JSON bodies sized to the largest valid message. */
export function createHttpApp(deps: HttpDeps, extra: { beforeApi?: (app: Express) => void; afterApi?: (app: Express) => void } = {}): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', 'loopback');
  app.use((request, response, next) => {
    const incoming = request.headers['x-request-id'];
    response.locals.requestId = typeof incoming === 'string' && /^[\w-]{1,64}$/.test(incoming) ? incoming : randomUUID();
    response.setHeader('X-Request-Id', response.locals.requestId as string);
    next();
  });
  app.use(helmet());
  app.use(cors({ origin: deps.corsOrigins.length > 0 ? deps.corsOrigins : false, credentials: true }));
  app.use(healthRoutes(deps.probes));
  // Worst case a message of maxMessageChars characters, each escaped as \uXXXX in JSON, plus room for the rest.
  app.use('/api', express.json({ limit: deps.limits.maxMessageChars * 6 + 16_384, strict: true }));
  extra.beforeApi?.(app);
  app.use('/api', authRoutes(deps));
  mountAdmin(app, deps);
  app.use('/api', authenticate(deps));
  app.use('/api', threadRoutes(deps), messageRoutes(deps), contextRoutes(deps), toolRunRoutes(deps));
  app.use('/api', notFoundHandler);
  extra.afterApi?.(app);
  app.use(notFoundHandler);
  app.use(errorMiddleware(deps.log));
  return app;
}
