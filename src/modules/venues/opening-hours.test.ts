import { describe, expect, test } from 'vitest';
import { isOpen, localTime } from './opening-hours.js';
import type { ChannelConstraint } from './schemas.js';

const week = (intervals: { from: string; to: string }[], sun: { from: string; to: string }[] = intervals) => ({
  MON: intervals,
  TUE: intervals,
  WED: intervals,
  THU: intervals,
  FRI: intervals,
  SAT: intervals,
  SUN: sun,
});
const channel = (w: ChannelConstraint['week'], active = true): ChannelConstraint => ({
  active,
  minDeliveryTime: '00:30:00',
  week: w,
});
// 2026-11-23 is a Monday; Warsaw is UTC+1 in November.
const warsaw = (hhmm: string, date = '2026-11-23'): number => Date.parse(`${date}T${hhmm}:00+01:00`);

describe('opening hours', () => {
  test('reads local weekday and time in the venue zone', () => {
    expect(localTime(warsaw('00:30'), 'Europe/Warsaw')).toEqual({ day: 'MON', minutes: 30 });
    expect(localTime(warsaw('00:30'), 'UTC')).toEqual({ day: 'SUN', minutes: 23 * 60 + 30 });
  });

  test('a split day is open in each interval and closed between them', () => {
    const split = channel(
      week([
        { from: '11:00', to: '15:00' },
        { from: '17:00', to: '22:30' },
      ]),
    );
    expect(isOpen(split, 'Europe/Warsaw', warsaw('12:00'))).toBe(true);
    expect(isOpen(split, 'Europe/Warsaw', warsaw('16:00'))).toBe(false);
    expect(isOpen(split, 'Europe/Warsaw', warsaw('22:29'))).toBe(true);
    expect(isOpen(split, 'Europe/Warsaw', warsaw('22:30'))).toBe(false);
  });

  test('00:00-24:00 is always open; an inactive channel or an empty day is closed', () => {
    const allDay = week([{ from: '00:00', to: '24:00' }]);
    expect(isOpen(channel(allDay), 'Europe/Warsaw', warsaw('23:59'))).toBe(true);
    expect(isOpen(channel(allDay, false), 'Europe/Warsaw', warsaw('12:00'))).toBe(false);
    expect(isOpen(channel(week([], [{ from: '10:00', to: '12:00' }])), 'Europe/Warsaw', warsaw('11:00'))).toBe(false);
    expect(isOpen(undefined, 'Europe/Warsaw', warsaw('11:00'))).toBe(false);
  });

  test('an interval past midnight stays open into the next day', () => {
    const late = channel(week([{ from: '20:00', to: '02:00' }]));
    expect(isOpen(late, 'Europe/Warsaw', warsaw('23:00'))).toBe(true);
    expect(isOpen(late, 'Europe/Warsaw', warsaw('01:30'))).toBe(true);
    expect(isOpen(late, 'Europe/Warsaw', warsaw('03:00'))).toBe(false);
  });
});
