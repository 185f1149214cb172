import type { Logger } from '../app/logger';
import type { ContextSettings } from '../core/context-settings';
import type { RateLimiter } from '../core/limits/rate-limiter';
import type { ThreadEventBus, ThreadStore, ToolQueue, ToolRunStore, TranscriptStore, TurnStore } from '../core/ports';
import type { TurnRunner } from '../core/turn/turn-runner';
import type { ServerInfoDto } from '../shared/api';
import type { AdminHttpDeps } from './admin/admin-deps';
import type { TokenService } from './auth';
import type { HealthProbes } from './health-routes';

/** What the HTTP adapter is given by the composition root. */
export interface HttpDeps {
  log: Logger;
  tokens: TokenService;
  threads: ThreadStore;
  transcript: TranscriptStore;
  turns: TurnStore;
  runner: TurnRunner;
  events: ThreadEventBus;
  settings: ContextSettings;
  sendLimiter: RateLimiter;
  guestLimiter: RateLimiter;
  probes: HealthProbes;
  info: ServerInfoDto;
  limits: { maxMessageChars: number; maxQueuedTurns: number; turnTimeoutMs: number };
  corsOrigins: string[];
  allowGuests: boolean;
  admin: AdminHttpDeps;
  toolRuns: ToolRunStore;
  toolQueue: ToolQueue;
}
