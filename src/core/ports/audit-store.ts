import type { Page } from './page';

export interface AuditEntry {
  id: string;
  /** The admin: a JWT's `sub`, or `admin-token` for the bootstrap token. */
  actor: string;
  action: string;
  threadId: string | null;
  details: Record<string, unknown>;
  createdAt: Date;
}

/** The admin audit trail: every admin write, who, what, when. */
export interface AuditStore {
  record(entry: {
    actor: string;
    action: string;
    threadId: string | null;
    details?: Record<string, unknown>;
  }): Promise<void>;
  /** Newest first. */
  list(input: { threadId?: string; cursor?: string; limit: number }): Promise<Page<AuditEntry>>;
}
