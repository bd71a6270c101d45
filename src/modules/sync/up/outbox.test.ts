import Database from 'better-sqlite3';
import { beforeEach, expect, test } from 'vitest';
import { migrate } from '../../../db/migrate.js';
import { chainHash, GENESIS_HASH } from '../../../shared/sync-protocol.js';
import { createOutbox, type Outbox } from './outbox.js';
import { createSyncRepo, type SyncRepo } from '../repo.js';

let db: Database.Database;
let repo: SyncRepo;
let outbox: Outbox;
beforeEach(() => {
  db = new Database(':memory:');
  migrate(db);
  repo = createSyncRepo(db);
  outbox = createOutbox(repo);
});

const wh = (n: number) => ({ id: `w${n}`, name: `Magazyn ${n}` });

test('events take consecutive seqs and each chain hash continues the previous one over the exact envelope', () => {
  const seqs = [1, 2, 3].map((n) => outbox.append('t', 'warehouse.changed', `w${n}`, wh(n), 1000 + n));
  expect(seqs).toEqual([1, 2, 3]);
  let prev = GENESIS_HASH;
  for (const row of repo.after(0, 10)) {
    expect(row.chainHash).toBe(chainHash(prev, row.envelope));
    prev = row.chainHash;
    expect(JSON.parse(row.envelope)).toMatchObject({
      tenant: 't',
      stream: 'stock',
      kind: 'warehouse.changed',
      aggregate: row.aggregateId,
    });
  }
  // A JSON text given as is goes into the envelope untouched.
  outbox.append('t', 'order.changed', 'o1', { json: '{"version":1,"order":{"id":"o1"}}' }, 2000);
  expect(repo.one(4)!.envelope).toContain(',"body":{"version":1,"order":{"id":"o1"}}}');
});

test('a rolled-back change takes its event with it, and the chain goes on from the last committed one', () => {
  outbox.append('t', 'warehouse.changed', 'w1', wh(1), 1);
  expect(() =>
    db.transaction(() => {
      outbox.append('t', 'warehouse.changed', 'w2', wh(2), 2);
      throw new Error('the change failed');
    })(),
  ).toThrow('the change failed');
  outbox.append('t', 'warehouse.changed', 'w3', wh(3), 3);
  const rows = repo.after(0, 10);
  expect(rows.map((r) => r.aggregateId)).toEqual(['w1', 'w3']);
  expect(rows[1]!.chainHash).toBe(chainHash(rows[0]!.chainHash, rows[1]!.envelope));
});

test('retention removes only acknowledged old events and always keeps the newest (it carries the chain)', () => {
  const T = Date.UTC(2026, 10, 1); // stamps on a set clock (one before 2000 is a clock that lost its setting)
  for (let n = 1; n <= 5; n++) outbox.append('t', 'warehouse.changed', `w${n}`, wh(n), T + n * 1000);
  expect(repo.prune(3, T + 10_000)).toBe(3); // 1..3 acknowledged and old
  expect(repo.after(0, 10).map((r) => r.seq)).toEqual([4, 5]);
  expect(repo.prune(5, T + 10_000)).toBe(1); // the newest stays
  expect(repo.after(0, 10).map((r) => r.seq)).toEqual([5]);
  // A new event never reuses a seq and continues the chain of the kept row.
  expect(outbox.append('t', 'warehouse.changed', 'w6', wh(6), T + 6000)).toBe(6);
  expect(repo.one(6)!.chainHash).toBe(chainHash(repo.one(5)!.chainHash, repo.one(6)!.envelope));
  expect(repo.backlog(5)).toEqual({ count: 1, oldestMs: T + 6000 });
});

test('retention ages an event by the set clock of the events after it: a 1970 stamp, or a year ahead', () => {
  const DAY = 86_400_000;
  const now = Date.UTC(2026, 10, 27);
  const cutoff = (at: number) => at - 30 * DAY; // sync.retentionDays
  // After a power cut the box stamps 1970; NTP sets it right; later it runs a year ahead, and is set right again.
  for (let n = 1; n <= 3; n++) outbox.append('t', 'warehouse.changed', `w${n}`, wh(n), Date.UTC(1970, 0, 1) + n);
  outbox.append('t', 'warehouse.changed', 'w4', wh(4), now);
  outbox.append('t', 'warehouse.changed', 'w5', wh(5), now + 365 * DAY);
  outbox.append('t', 'warehouse.changed', 'w6', wh(6), now + 2 * DAY);
  outbox.append('t', 'warehouse.changed', 'w7', wh(7), now + 40 * DAY);
  // Right after the clock was set, the 1970 events are minutes old, not 56 years: all kept.
  expect(repo.prune(7, cutoff(now + 60_000))).toBe(0);
  // Kept 30 days after the event that follows them; the year-ahead one goes with the event after it, not a year on.
  expect(repo.prune(7, cutoff(now + 30 * DAY + 1))).toBe(4);
  expect(repo.after(0, 10).map((r) => r.seq)).toEqual([5, 6, 7]);
  expect(repo.prune(7, cutoff(now + 32 * DAY + 1))).toBe(2);
  expect(repo.after(0, 10).map((r) => r.seq)).toEqual([7]);
  // A clock that says 1970 now ages nothing.
  outbox.append('t', 'warehouse.changed', 'w8', wh(8), 5);
  expect(repo.prune(8, cutoff(10))).toBe(0);
});
