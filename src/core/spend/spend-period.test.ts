import { describe, expect, it } from 'vitest';
import {
  isTimeZone,
  localDay,
  nextPeriodStartDay,
  periodResetsAt,
  periodStartDay,
  periodStarts,
  startOfLocalDay,
} from './spend-period';

const at = (iso: string) => new Date(iso);

describe('spend periods in a time zone', () => {
  it('knows the day an instant falls on in the zone', () => {
    expect(localDay(at('2026-11-27T23:30:00Z'), 'UTC')).toBe('2026-11-27');
    expect(localDay(at('2026-11-27T23:30:00Z'), 'Europe/Paris')).toBe('2026-11-28');
    expect(localDay(at('2026-11-27T03:00:00Z'), 'America/New_York')).toBe('2026-11-26');
  });

  it('starts a week on Monday and a month on its first day', () => {
    // Friday 27 November 2026.
    expect(periodStarts(at('2026-11-27T12:00:00Z'), 'UTC')).toEqual({
      day: '2026-11-27',
      week: '2026-11-23',
      month: '2026-11-01',
    });
    // A Monday is its own week's start; a Sunday belongs to the week of the Monday before.
    expect(periodStartDay('week', at('2026-11-23T00:00:00Z'), 'UTC')).toBe('2026-11-23');
    expect(periodStartDay('week', at('2026-11-29T23:59:59Z'), 'UTC')).toBe('2026-11-23');
    // Across a year.
    expect(periodStartDay('week', at('2027-01-02T10:00:00Z'), 'UTC')).toBe('2026-12-28');
  });

  it('steps to the next period across months, years and leap days', () => {
    expect(nextPeriodStartDay('day', '2026-12-31')).toBe('2027-01-01');
    expect(nextPeriodStartDay('day', '2028-02-28')).toBe('2028-02-29');
    expect(nextPeriodStartDay('week', '2026-12-28')).toBe('2027-01-04');
    expect(nextPeriodStartDay('month', '2026-12-01')).toBe('2027-01-01');
    expect(nextPeriodStartDay('month', '2028-01-01')).toBe('2028-02-01');
  });

  it('resets at midnight of the zone, not of UTC', () => {
    expect(periodResetsAt('day', at('2026-11-27T12:00:00Z'), 'UTC').toISOString()).toBe('2026-11-28T00:00:00.000Z');
    // Paris is UTC+1 in November: its midnight is 23:00 UTC.
    expect(periodResetsAt('day', at('2026-11-27T12:00:00Z'), 'Europe/Paris').toISOString()).toBe(
      '2026-11-27T23:00:00.000Z',
    );
    expect(periodResetsAt('month', at('2026-11-27T12:00:00Z'), 'Asia/Tokyo').toISOString()).toBe(
      '2026-11-30T15:00:00.000Z',
    );
    expect(periodResetsAt('week', at('2026-11-27T12:00:00Z'), 'UTC').toISOString()).toBe('2026-11-30T00:00:00.000Z');
  });

  it('keeps the reset at local midnight across a daylight saving change', () => {
    // Europe/Paris moves to summer time on 29 March 2026: the day before ends at 23:00 UTC, that day at 22:00 UTC.
    expect(periodResetsAt('day', at('2026-03-28T12:00:00Z'), 'Europe/Paris').toISOString()).toBe(
      '2026-03-28T23:00:00.000Z',
    );
    expect(periodResetsAt('day', at('2026-03-29T12:00:00Z'), 'Europe/Paris').toISOString()).toBe(
      '2026-03-29T22:00:00.000Z',
    );
    // A zone whose clocks skip midnight (Santiago, September 2026: 00:00 becomes 01:00): the day starts at 01:00.
    const start = startOfLocalDay('2026-09-06', 'America/Santiago');
    expect(localDay(start, 'America/Santiago')).toBe('2026-09-06');
    expect(localDay(new Date(start.getTime() - 1000), 'America/Santiago')).toBe('2026-09-05');
  });

  it('a reset is the first instant of the next period, and the instant before it is still in this one', () => {
    for (const zone of ['UTC', 'Europe/Paris', 'America/Los_Angeles', 'Asia/Kolkata', 'Pacific/Chatham']) {
      for (const period of ['day', 'week', 'month'] as const) {
        const now = at('2026-11-27T12:34:56Z');
        const reset = periodResetsAt(period, now, zone);
        expect(reset.getTime()).toBeGreaterThan(now.getTime());
        expect(periodStartDay(period, new Date(reset.getTime() - 1000), zone)).toBe(periodStartDay(period, now, zone));
        expect(periodStartDay(period, reset, zone)).toBe(nextPeriodStartDay(period, periodStartDay(period, now, zone)));
      }
    }
  });

  it('tells a known zone from an unknown one', () => {
    expect(isTimeZone('UTC')).toBe(true);
    expect(isTimeZone('Europe/Paris')).toBe(true);
    expect(isTimeZone('Mars/Olympus')).toBe(false);
  });
});
