import { expect, test } from 'vitest';
import { createdBounds, rangeParams, todayIn, zoneOr } from './dates.js';

const q = (s: string) => new URLSearchParams(s);

test('a range is two real dates, from <= to, within the days allowed; each fault names its parameter', () => {
  expect(rangeParams(q('from=2026-02-28&to=2026-03-01'), 366)).toEqual({ from: '2026-02-28', to: '2026-03-01' });
  expect(rangeParams(q('from=2024-01-01&to=2024-12-31'), 366).to).toBe('2024-12-31');
  const fault = (s: string) => {
    try {
      rangeParams(q(s), 366);
    } catch (err) {
      return (err as { codes: { code: string; args: string[] }[] }).codes[0];
    }
  };
  expect(fault('to=2026-01-01')).toEqual(expect.objectContaining({ code: 'invalidField', args: ['from'] }));
  expect(fault('from=2026-02-30&to=2026-03-01')?.args).toEqual(['from']);
  expect(fault('from=2026-1-01&to=2026-03-01')?.args).toEqual(['from']);
  expect(fault('from=2026-01-01&to=2026-13-01')?.args).toEqual(['to']);
  expect(fault('from=2026-03-02&to=2026-03-01')?.args).toEqual(['to']);
  expect(fault('from=2025-01-01&to=2026-01-02')?.args).toEqual(['to']);
  expect(fault('from=1999-12-31&to=2000-01-01')?.args).toEqual(['from']);
});

test("today and its week's Monday in a zone; the created bounds cover every zone's day", () => {
  // 2026-11-29 23:30 UTC is Monday 2026-11-30 00:30 in Warsaw, still Sunday in UTC.
  const ms = Date.parse('2026-11-29T23:30:00Z');
  expect(todayIn('Europe/Warsaw', ms)).toEqual({ today: '2026-11-30', weekFrom: '2026-11-30' });
  expect(todayIn('UTC', ms)).toEqual({ today: '2026-11-29', weekFrom: '2026-11-23' });
  expect(zoneOr('Mars/Olympus', 'Europe/Warsaw')).toBe('Europe/Warsaw');
  expect(zoneOr(null, 'UTC')).toBe('UTC');
  expect(createdBounds('2026-11-30', '2026-11-30')).toEqual({
    after: new Date('2026-11-29T10:00:00Z'),
    before: new Date('2026-12-01T12:00:00Z'),
  });
});
