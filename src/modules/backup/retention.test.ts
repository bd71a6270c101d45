import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { backupName, takenMsOf, tempName, tempOwnerOf } from './names.js';
import { retain } from './retention.js';

const at = (iso: string) => ({ name: backupName(Date.parse(iso)), takenMs: Date.parse(iso) });
const HOUR = 3_600_000;
const kept = (backups: { name: string; takenMs: number }[], keepHourly: number, keepDaily: number) =>
  [...retain(backups, { keepHourly, keepDaily }).keys()].sort();

describe('backup names', () => {
  test('UTC time in ISO 8601 basic format, no colons; parsed back exactly', () => {
    const ms = Date.parse('2026-04-12T13:05:09.042Z');
    expect(backupName(ms)).toBe('venue-box-20260412T130509.042Z.backup');
    expect(takenMsOf(backupName(ms))).toBe(ms);
  });

  test('other names are not backups: temp files, SQLite side files, look-alikes, impossible dates', () => {
    for (const name of [
      tempName(0, 123),
      `${tempName(0, 123)}-journal`,
      'venue-box-20260412T130509.042Z.backup-journal',
      'venue-box-20260412T130509Z.backup',
      'venue-box-20261312T130509.042Z.backup',
      'venue-box-20260230T000000.000Z.backup',
      'x-venue-box-20260412T130509.042Z.backup',
      'venue-box.db',
    ])
      expect(takenMsOf(name), name).toBeUndefined();
  });

  test('a temp file names its writer', () => {
    expect(tempOwnerOf(tempName(Date.parse('2026-04-12T13:00:00Z'), 4242))).toBe(4242);
    expect(tempOwnerOf(`${tempName(0, 7)}-journal`)).toBe(7);
    expect(tempOwnerOf(backupName(0))).toBeUndefined();
  });
});

describe('retention: the newest of each of the last N hours and M days that have a backup, and the newest', () => {
  test('hourly backups for 20 days with 48 hourly + 14 daily: 48 + 12 other days = 60 files', () => {
    const start = Date.parse('2026-04-01T00:00:00Z');
    const backups = Array.from({ length: 20 * 24 }, (_, i) => ({
      name: backupName(start + i * HOUR),
      takenMs: start + i * HOUR,
    }));
    const result = retain(backups, { keepHourly: 48, keepDaily: 14 });
    expect(result.size).toBe(60);
    // The last 48 hours, each by the hourly rule.
    for (const b of backups.slice(-48)) expect(result.get(b.name)).toContain('hourly');
    // Days: the 23:00 backup of each of the last 14 days (the newest of its day).
    const daily = [...result]
      .filter(([, why]) => why.includes('daily'))
      .map(([name]) => name)
      .sort();
    expect(daily).toEqual(Array.from({ length: 14 }, (_, d) => backupName(start + (6 + d) * 24 * HOUR + 23 * HOUR)));
    expect(result.get(backups.at(-1)!.name)).toEqual(['newest', 'hourly', 'daily']);
  });

  test('within an hour only the newest stays; a manual backup supersedes the scheduled one of its hour', () => {
    const backups = [
      at('2026-04-12T10:00:00Z'),
      at('2026-04-12T10:40:00Z'),
      at('2026-04-12T11:00:00Z'),
      at('2026-04-12T11:20:00Z'),
    ];
    expect(kept(backups, 48, 14)).toEqual([backups[1]!.name, backups[3]!.name].sort());
  });

  test('hours and days without a backup do not count: a box that was off keeps its older backups', () => {
    const backups = [at('2026-03-01T10:00:00Z'), at('2026-03-01T11:00:00Z'), at('2026-04-12T09:00:00Z')];
    expect(kept(backups, 3, 0)).toEqual(backups.map((b) => b.name).sort());
    expect(kept(backups, 2, 0)).toEqual([backups[1]!.name, backups[2]!.name].sort());
  });

  test('counts of 0 keep the newest only; no backups keep nothing', () => {
    const backups = [at('2026-04-12T10:00:00Z'), at('2026-04-11T10:00:00Z')];
    expect([...retain(backups, { keepHourly: 0, keepDaily: 0 })]).toEqual([[backups[0]!.name, ['newest']]]);
    expect(retain([], { keepHourly: 48, keepDaily: 14 }).size).toBe(0);
  });

  test('days are UTC days: 23:30 and 00:30 UTC are two days', () => {
    const backups = [at('2026-04-11T23:30:00Z'), at('2026-04-12T00:30:00Z')];
    expect(kept(backups, 0, 2)).toEqual(backups.map((b) => b.name).sort());
    expect(kept(backups, 0, 1)).toEqual([backups[1]!.name]);
  });

  test('property: the kept set is independent of input order, never over the counts, and always holds the newest', () => {
    const times = fc.uniqueArray(fc.integer({ min: 0, max: 60 * 24 * HOUR }), { maxLength: 200 });
    fc.assert(
      fc.property(times, fc.nat(60), fc.nat(20), (offsets, h, d) => {
        const base = Date.parse('2026-01-01T00:00:00Z');
        const backups = offsets.map((o) => ({ name: backupName(base + o), takenMs: base + o }));
        const result = retain(backups, { keepHourly: h, keepDaily: d });
        expect(retain([...backups].reverse(), { keepHourly: h, keepDaily: d })).toEqual(result);
        expect(result.size).toBeLessThanOrEqual(Math.min(backups.length, h + d + 1));
        if (backups.length > 0)
          expect(result.has(backups.reduce((a, b) => (b.takenMs > a.takenMs ? b : a)).name)).toBe(true);
        // Whatever is kept by a rule is the newest of its hour or day.
        for (const [name, why] of result) {
          const t = takenMsOf(name)!;
          const period = why.includes('hourly') ? HOUR : why.includes('daily') ? 24 * HOUR : 0;
          if (period)
            expect(
              backups.some((b) => Math.floor(b.takenMs / period) === Math.floor(t / period) && b.takenMs > t),
            ).toBe(false);
        }
      }),
    );
  });
});
