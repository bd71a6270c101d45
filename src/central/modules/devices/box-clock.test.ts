import { expect, test } from 'vitest';
import { centralInstant, TRUSTED_SKEW_MS } from './box-clock.js';

const NOW = Date.parse('2026-11-27T09:00:00.000Z');
const YEAR = 365 * 86_400_000;
const at = (boxMs: number, offsetMs: number | null, receivedMs = NOW) =>
  centralInstant(boxMs, { offsetMs, receivedMs }).toISOString();

test('a box within the trusted skew is taken at its word, to the millisecond', () => {
  expect(at(NOW - 5_000, 250)).toBe('2026-11-27T08:59:55.000Z');
  expect(at(NOW - 5_000, -TRUSTED_SKEW_MS)).toBe('2026-11-27T08:59:55.000Z');
  expect(at(NOW - 5_000, null)).toBe('2026-11-27T08:59:55.000Z');
});

test('a box past it has its offset taken off: 1970, or a year ahead, lands on the real instant', () => {
  const offset1970 = Date.parse('1970-01-01T08:00:00.000Z') - NOW;
  expect(at(Date.parse('1970-01-01T07:59:00.000Z'), offset1970)).toBe('2026-11-27T08:59:00.000Z');
  expect(at(NOW + YEAR - 60_000, YEAR)).toBe('2026-11-27T08:59:00.000Z');
});

test('what is still impossible (before 2000, after the receive time) is the receive time', () => {
  // Written in 1970, sent after NTP set the clock right: the offset is ~0, the time still 1970.
  expect(at(Date.parse('1970-01-01T08:00:00.000Z'), 40)).toBe('2026-11-27T09:00:00.000Z');
  // Written a year ahead, sent after the clock was set back.
  expect(at(NOW + YEAR, 0)).toBe('2026-11-27T09:00:00.000Z');
  expect(at(Date.parse('1999-12-31T23:59:59.999Z'), null)).toBe('2026-11-27T09:00:00.000Z');
  expect(at(Number.NaN, null)).toBe('2026-11-27T09:00:00.000Z');
  // A year-10000 or BC date never reaches a cursor.
  expect(at(Date.UTC(10000, 0, 1), null)).toBe('2026-11-27T09:00:00.000Z');
  expect(at(NOW + TRUSTED_SKEW_MS, null)).toBe('2026-11-27T09:01:00.000Z');
});
