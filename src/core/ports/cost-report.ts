import type { ModelUsage } from '../costs/estimate-costs';

/** How the admin's cost view groups model calls. */
export type CostGrouping = 'day' | 'user' | 'thread';

/** One group (a day of SPEND_LIMIT_TIMEZONE's calendar, a user, a thread) with its usage per model. */
export interface UsageGroup {
  key: string;
  label: string;
  usage: ModelUsage[];
}

/** Read model of model-call usage for the admin's estimated costs. */
export interface CostReport {
  /**
   * Usage of the calls made since `since`: grouped, the `limit` groups with the most prompt tokens (in the order of
   * their keys: the caller ranks them), and the total of all of them per model (the groups past `limit` included),
   * read in one statement so both agree.
   */
  usageBy(input: {
    by: CostGrouping;
    since: Date;
    limit: number;
  }): Promise<{ groups: UsageGroup[]; total: ModelUsage[] }>;
}
