import { createBullBoard } from '@bull-board/api';
import type { IServerAdapter } from '@bull-board/api/typings/app';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { ExpressAdapter } from '@bull-board/express';
import cookieParser from 'cookie-parser';
import type { Express } from 'express';
import type { HttpDeps } from '../http-deps';
import { adminCallsRoutes } from '../routes/admin-calls-routes';
import { adminOpsRoutes } from './admin-ops-routes';
import { adminSessionRoutes } from './admin-session-routes';
import { adminThreadRoutes } from './admin-thread-routes';
import { adminUserRoutes } from './admin-user-routes';
import { adminSpendLimitRoutes } from './admin-spend-limit-routes';
import { requireSameOriginForCookieChanges } from './same-origin';

/** Where BullMQ's own dashboard is served (a server page; the browser app does not use it). */
export const JOB_DASHBOARD_PATH = '/admin/jobs';

/**
 * The admin API under /api/admin (every route behind admin auth except the session routes) and bull-board at
 * /admin/jobs behind the same auth (cookie or bearer). Call before the user-auth middleware of /api.
 */
export function mountAdmin(app: Express, deps: HttpDeps): void {
  const cookies = cookieParser();
  const { auth, queues } = deps.admin;
  app.use('/api', cookies, adminSessionRoutes(deps));
  app.use('/api/admin', auth.middleware, requireSameOriginForCookieChanges);
  app.use('/api', adminThreadRoutes(deps), adminOpsRoutes(deps), adminCallsRoutes(deps.admin), adminUserRoutes(deps));
  app.use('/api', adminSpendLimitRoutes(deps));

  // @bull-board/express ships its own copy of @bull-board/api (a patch version apart): same shapes, distinct types.
  const dashboard = new ExpressAdapter();
  dashboard.setBasePath(JOB_DASHBOARD_PATH);
  const board = createBullBoard({
    queues: queues.list().map((queue) => new BullMQAdapter(queue)),
    serverAdapter: dashboard as unknown as IServerAdapter,
    options: { uiConfig: { boardTitle: 'Jobs' } },
  });
  queues.onRegister((queue) => board.addQueue(new BullMQAdapter(queue)));
  app.use(
    JOB_DASHBOARD_PATH,
    cookies,
    auth.middleware,
    requireSameOriginForCookieChanges,
    dashboard.getRouter() as Express,
  );
}
