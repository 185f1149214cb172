import type { SpendPeriod } from './spend-limit';

/**
 * Calendar arithmetic of spend periods in a time zone (IANA name, SPEND_LIMIT_TIMEZONE), without a date library:
 * days are `YYYY-MM-DD` strings of the zone's calendar; instants are Dates.
 */

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterOf(timeZone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(timeZone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    });
    formatters.set(timeZone, formatter);
  }
  return formatter;
}

/** Whether Intl knows the time zone (`UTC`, `Europe/Paris`, ...). */
export function isTimeZone(timeZone: string): boolean {
  try {
    formatterOf(timeZone);
    return true;
  } catch {
    return false;
  }
}

/** The wall-clock fields of an instant in the zone. */
function wallClock(at: Date, timeZone: string): { year: number; month: number; day: number; ms: number } {
  const parts: Record<string, number> = {};
  for (const part of formatterOf(timeZone).formatToParts(at)) {
    if (part.type !== 'literal') parts[part.type] = Number(part.value);
  }
  const year = parts.year!;
  const month = parts.month!;
  const day = parts.day!;
  const ms = Date.UTC(year, month - 1, day, parts.hour!, parts.minute!, parts.second!);
  return { year, month, day, ms };
}

const pad = (value: number, size = 2) => String(value).padStart(size, '0');
const dayString = (utc: Date) =>
  `${pad(utc.getUTCFullYear(), 4)}-${pad(utc.getUTCMonth() + 1)}-${pad(utc.getUTCDate())}`;
const parseDay = (day: string) => {
  const [year, month, date] = day.split('-').map(Number) as [number, number, number];
  return new Date(Date.UTC(year, month - 1, date));
};

/** The day of the zone's calendar an instant falls on. */
export function localDay(at: Date, timeZone: string): string {
  const { year, month, day } = wallClock(at, timeZone);
  return `${pad(year, 4)}-${pad(month)}-${pad(day)}`;
}

/** The first day of the period an instant falls in (a week starts on Monday). */
export function periodStartDay(period: SpendPeriod, at: Date, timeZone: string): string {
  const today = parseDay(localDay(at, timeZone));
  if (period === 'day') return dayString(today);
  if (period === 'month') return dayString(new Date(Date.UTC(today.getUTCFullYear(), today.getUTCMonth(), 1)));
  const sinceMonday = (today.getUTCDay() + 6) % 7;
  return dayString(new Date(today.getTime() - sinceMonday * 86_400_000));
}

/** The first day of the period after the one that starts on `startDay`. */
export function nextPeriodStartDay(period: SpendPeriod, startDay: string): string {
  const start = parseDay(startDay);
  if (period === 'day') return dayString(new Date(start.getTime() + 86_400_000));
  if (period === 'week') return dayString(new Date(start.getTime() + 7 * 86_400_000));
  return dayString(new Date(Date.UTC(start.getUTCFullYear(), start.getUTCMonth() + 1, 1)));
}

/**
 * The instant a day of the zone's calendar begins (its first wall-clock moment: 00:00, or the end of a daylight
 * saving gap that swallows midnight).
 */
export function startOfLocalDay(day: string, timeZone: string): Date {
  const midnight = parseDay(day).getTime();
  // The zone's offset at a guess, corrected once with the offset at the first result (they differ across a change).
  const offsetAt = (instant: number) => wallClock(new Date(instant), timeZone).ms - Math.floor(instant / 1000) * 1000;
  let instant = midnight - offsetAt(midnight);
  instant = midnight - offsetAt(instant);
  // A gap at midnight: the wall clock lands on the previous day; step forward until the day has begun.
  while (localDay(new Date(instant), timeZone) < day) instant += 15 * 60_000;
  return new Date(instant);
}

/** When the period an instant falls in ends and the next one begins (the reset of a limit). */
export function periodResetsAt(period: SpendPeriod, at: Date, timeZone: string): Date {
  return startOfLocalDay(nextPeriodStartDay(period, periodStartDay(period, at, timeZone)), timeZone);
}

/** The first day of each period kind at an instant: what a reservation checks its accounts against. */
export function periodStarts(at: Date, timeZone: string): Record<SpendPeriod, string> {
  return {
    day: periodStartDay('day', at, timeZone),
    week: periodStartDay('week', at, timeZone),
    month: periodStartDay('month', at, timeZone),
  };
}
