import { describe, expect, test } from 'vitest';
import { inDailyWindow, notNow } from './window.js';

const at = (localMinutes: number, venuesClosed = false) => ({ ms: 10 * 60_000 * 1000, localMinutes, venuesClosed });
const quiet = { openOrders: 0, lastCommandMs: null };

describe('the install window', () => {
  test('a daily window, one past midnight, and the whole day', () => {
    expect(inDailyWindow({ from: '02:00', to: '05:00' }, 2 * 60)).toBe(true);
    expect(inDailyWindow({ from: '02:00', to: '05:00' }, 5 * 60)).toBe(false);
    expect(inDailyWindow({ from: '22:00', to: '05:00' }, 23 * 60)).toBe(true);
    expect(inDailyWindow({ from: '22:00', to: '05:00' }, 60)).toBe(true);
    expect(inDailyWindow({ from: '22:00', to: '05:00' }, 12 * 60)).toBe(false);
    expect(inDailyWindow({ from: '00:00', to: '24:00' }, 23 * 60 + 59)).toBe(true);
  });

  test("by default the venues' closed hours", () => {
    expect(notNow('closed', at(0, false), quiet, 10)).toMatch(/venues to close/);
    expect(notNow('closed', at(0, true), quiet, 10)).toBeUndefined();
  });

  test('never with an order open, nor within the quiet minutes of a command', () => {
    const window = { from: '00:00', to: '24:00' };
    expect(notNow(window, at(60), { openOrders: 2, lastCommandMs: null }, 10)).toBe('2 order(s) open');
    const now = at(60).ms;
    expect(notNow(window, at(60), { openOrders: 0, lastCommandMs: now - 9 * 60_000 }, 10)).toMatch(/10 minutes/);
    expect(notNow(window, at(60), { openOrders: 0, lastCommandMs: now - 11 * 60_000 }, 10)).toBeUndefined();
  });

  test('a release from a stick waits for no window and no quiet minutes, only for open orders', () => {
    const now = at(60).ms;
    expect(notNow('now', at(60), { openOrders: 0, lastCommandMs: now }, 10)).toBeUndefined();
    expect(notNow('now', at(60), { openOrders: 1, lastCommandMs: now }, 10)).toBe('1 order(s) open');
  });
});
