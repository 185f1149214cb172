import { z } from 'zod';
import { defineTool } from '../types';

function validTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/** The current date and time, in UTC and optionally in an IANA time zone. */
export const currentTimeTool = defineTool({
  name: 'current_time',
  shortDescription: 'The current date and time, optionally in an IANA time zone.',
  description: 'Returns the current date and time (ISO 8601 UTC), and in the given IANA time zone when one is named.',
  schema: z.object({
    time_zone: z
      .string()
      .max(64)
      .refine(validTimeZone, 'not an IANA time zone (e.g. Europe/Paris)')
      .optional()
      .describe('IANA time zone such as "America/New_York"'),
  }),
  mode: 'inline',
  timeoutMs: 1000,
  async run({ time_zone: timeZone }, context) {
    const now = context.now();
    const lines = [`UTC: ${now.toISOString()}`];
    if (timeZone) {
      const local = new Intl.DateTimeFormat('en-GB', { timeZone, dateStyle: 'full', timeStyle: 'long' }).format(now);
      lines.push(`${timeZone}: ${local}`);
    }
    return lines.join('\n');
  },
});
