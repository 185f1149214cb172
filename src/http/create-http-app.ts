import { randomUUID } from 'node:crypto';
import cors from 'cors';
import express, { type Express } from 'express';
import helmet from 'helmet';
import { mountAdmin } from './admin/mount-admin';
import { runInLogContext, type LogContext } from '../observability/log-context';
import { authenticate, principalOf } from './authenticate';
import { limitRequestsPerUser } from './limit-requests-per-user';
import { checkJsonBody } from './json-body-checks';
import { errorMiddleware, notFoundHandler } from './error-middleware';
import { healthRoutes } from './health-routes';
import { anthropicErrorHandler } from './anthropic-messages/anthropic-errors';
import { MESSAGES_PATH, messagesRoutes } from './anthropic-messages/messages-routes';
import { facadeRoutes } from './openai-facade/facade-routes';
import { openAIErrorHandler } from './openai-facade/openai-errors';
import { openApiRoutes } from './openapi/openapi-routes';
import type { HttpDeps } from './http-deps';
import { authRoutes } from './routes/auth-routes';
import { contextRoutes } from './routes/context-routes';
import { exportRoutes } from './routes/export-routes';
import { forkRoutes } from './routes/fork-routes';
import { searchRoutes } from './routes/search-routes';
import { memoryRoutes } from './routes/memory-routes';
import { SAVED_MEMORY_PATH, savedMemoryRoutes, savedMemoryServiceKeyAuth } from './routes/saved-memory-routes';
import { accountRoutes } from './routes/account-routes';
import { usageRoutes } from './routes/usage-routes';
import { messageRoutes } from './routes/message-routes';
import { threadRoutes } from './routes/thread-routes';
import { toolRunRoutes } from './routes/tool-run-routes';
import { TOOL_CALLBACK_PATHS, toolCallbackBodyParser, toolCallbackRoutes } from './routes/tool-callback-routes';

/** The express app: security headers, CORS to configured origins, JSON bodies sized to the largest valid message. */
export function createHttpApp(
  deps: HttpDeps,
  extra: { first?: (app: Express) => void; beforeApi?: (app: Express) => void; afterApi?: (app: Express) => void } = {},
): Express {
  const app = express();
  app.disable('x-powered-by');
  // TRUST_PROXY: only a known proxy may say who the client is (request.ip keys the per-address limits).
  app.set('trust proxy', deps.trustProxy);
  app.use((request, response, next) => {
    const incoming = request.headers['x-request-id'];
    response.locals.requestId =
      typeof incoming === 'string' && /^[\w-]{1,64}$/.test(incoming) ? incoming : randomUUID();
    response.setHeader('X-Request-Id', response.locals.requestId as string);
    // Every log line written while this request runs carries its id (and the user's, once authenticated).
    const logContext: LogContext = { requestId: response.locals.requestId as string };
    response.locals.logContext = logContext;
    runInLogContext(logContext, next);
  });
  extra.first?.(app);
  app.use(helmet());
  app.use(cors({ origin: deps.corsOrigins.length > 0 ? deps.corsOrigins : false, credentials: deps.corsCredentials }));
  app.use(healthRoutes(deps.probes));
  // Runners' results may be TOOL_RESULT_MAX_CHARS long: their callbacks get a parser of their own, first.
  if (deps.toolCallbacks)
    app.use(
      TOOL_CALLBACK_PATHS,
      ...toolCallbackBodyParser({ callbacks: deps.toolCallbacks, failures: deps.rateLimits.authFailures }),
    );
  // Worst case a message of maxMessageChars characters, each escaped as \uXXXX in JSON, plus room for the rest.
  app.use(
    '/api',
    express.json({
      limit: deps.limits.maxMessageChars * 6 + 16_384,
      strict: true,
      // Kept for the runners' callbacks, whose HMAC is over the raw bytes (the same buffer, not a copy).
      verify: (request, _response, buffer) => {
        checkJsonBody(buffer);
        (request as { rawBody?: Buffer }).rawBody = buffer;
      },
    }),
  );
  // The body parser resumes in the socket's async context: re-enter the request's.
  app.use((_request, response, next) => runInLogContext(response.locals.logContext as LogContext, next));
  extra.beforeApi?.(app);
  // Runners' callbacks carry a signature instead of a bearer token.
  app.use('/api', authRoutes(deps), openApiRoutes(), toolCallbackRoutes(deps));
  mountAdmin(app, deps);
  // Anthropic's front door, then the OpenAI-compatible one: each its own body limit, auth and error shape (also for
  // what failed before its routes).
  if (deps.facade) {
    app.use(MESSAGES_PATH, messagesRoutes(deps, deps.facade), anthropicErrorHandler(deps.log));
    app.use('/v1', facadeRoutes(deps, deps.facade), openAIErrorHandler(deps.log));
  }
  // A service key with X-User-Id reaches /api/memory, and only it (the rest of /api wants a user's token).
  app.use(SAVED_MEMORY_PATH, savedMemoryServiceKeyAuth(deps));
  const authenticateUser = authenticate(deps);
  app.use('/api', (request, response, next) => {
    if (response.locals.principal) next();
    else authenticateUser(request, response, next);
  });
  app.use('/api', (_request, response, next) => {
    (response.locals.logContext as LogContext).userId = principalOf(response).userId;
    runInLogContext(response.locals.logContext as LogContext, next);
  });
  if (deps.requestLimiter) app.use('/api', limitRequestsPerUser(deps.requestLimiter));
  app.use(
    '/api',
    threadRoutes(deps),
    messageRoutes(deps),
    contextRoutes(deps),
    toolRunRoutes(deps),
    memoryRoutes(deps),
    exportRoutes(deps),
    searchRoutes(deps),
  );
  app.use('/api', forkRoutes(deps), savedMemoryRoutes(deps), accountRoutes(deps), usageRoutes(deps));
  app.use('/api', notFoundHandler);
  extra.afterApi?.(app);
  app.use(notFoundHandler);
  app.use(errorMiddleware(deps.log));
  return app;
}
