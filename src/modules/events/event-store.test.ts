import Database from 'better-sqlite3';
import { describe, expect, test } from 'vitest';
import { migrate } from '../../db/migrate.js';
import { createEventStore } from './event-store.js';

const HOUR = 3_600_000;

function storeWith(stamps: number[]) {
  const db = new Database(':memory:');
  migrate(db);
  const events = createEventStore(db);
  for (const [i, ms] of stamps.entries())
    events.append('t', `u${i % 3}`, { type: 'NOTIFICATION', payloadJson: `{"n":${i}}` }, ms);
  const left = () =>
    (db.prepare('SELECT created_ms FROM user_events ORDER BY rowid').all() as { created_ms: number }[]).map(
      (r) => r.created_ms,
    );
  return { db, events, left };
}

describe('socket event retention (pruneBefore)', () => {
  test('removes the events written before the first one at or after the cutoff, and says how many', () => {
    const { events, left } = storeWith([100, 110, 120, 200, 210]);
    expect(events.pruneBefore(180, 250)).toBe(3);
    expect(left()).toEqual([200, 210]);
    expect(events.pruneBefore(180, 250)).toBe(0);
    expect(events.pruneBefore(300, 350)).toBe(2);
    expect(left()).toEqual([]);
    expect(events.pruneBefore(300, 350)).toBe(0);
  });

  test('a clock set back keeps the events after the first young one; a clock set ahead does not stop it', () => {
    const back = storeWith([100, 200, 150, 160]);
    expect(back.events.pruneBefore(180, 250)).toBe(1);
    expect(back.left()).toEqual([200, 150, 160]);

    // An event stamped a year ahead, then the clock put right: it goes with the prefix it was written in.
    const ahead = storeWith([100, 250 + 8760 * HOUR, 120, 200, 210]);
    expect(ahead.events.pruneBefore(180, 250)).toBe(3);
    expect(ahead.left()).toEqual([200, 210]);
    // Within the hour ahead of now, an event is taken as young.
    const soon = storeWith([100, 250 + HOUR / 2, 120]);
    expect(soon.events.pruneBefore(180, 250)).toBe(1);
  });

  test('a clock set back far, with nothing written since, removes no young event', () => {
    const day = 24 * HOUR;
    const now = 1_800_000_000_000;
    // Two days of events; the clock then 3 days behind, 13 hours behind, or at the epoch (a board with no clock
    // battery, booted before it could ask for the time).
    const stamps = [now - 47 * HOUR, now - 30 * HOUR, now - day, now - 2 * HOUR, now - 60_000];
    for (const clock of [now - 3 * day, now - 13 * HOUR, 0]) {
      const { events, left } = storeWith(stamps);
      expect(events.pruneBefore(clock - 48 * HOUR, clock)).toBe(0);
      expect(left()).toEqual(stamps);
    }
    // The clock right again: only what is older than the retention goes.
    const { events, left } = storeWith([now - 50 * HOUR, ...stamps]);
    expect(events.pruneBefore(now - 48 * HOUR, now)).toBe(1);
    expect(left()).toEqual(stamps);
  });

  test('a time that is not a number is refused, and nothing is removed', () => {
    const { events, left } = storeWith([100, 110, 200]);
    expect(() => events.pruneBefore(180, Number.NaN)).toThrow(TypeError);
    expect(() => events.pruneBefore(undefined as unknown as number, 250)).toThrow(TypeError);
    expect(left()).toEqual([100, 110, 200]);
  });

  test('reads the table in rowid order, with no index on the age (every command would write it)', () => {
    const { db } = storeWith([]);
    expect(
      db.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'user_events'").all(),
    ).toEqual([{ name: 'user_events_stream' }]);
    const plan = db
      .prepare(`EXPLAIN QUERY PLAN SELECT rowid FROM user_events
      WHERE created_ms >= 1 AND created_ms <= 2 ORDER BY rowid LIMIT 1`)
      .all() as { detail: string }[];
    expect(plan.map((p) => p.detail)).toEqual(['SCAN user_events']);
  });
});

describe('stream numbers', () => {
  const event = (n: number) => ({ type: 'NOTIFICATION' as const, payloadJson: `{"n":${n}}` });

  test('go on from the newest number even once the retention removed every event of the stream', () => {
    const { events, db } = storeWith([]);
    expect(events.position('t', 'u')).toBe(0);
    expect([1, 2, 3].map((n) => events.append('t', 'u', event(n), 100).seq)).toEqual([1, 2, 3]);
    expect(events.append('t', 'v', event(9), 200).seq).toBe(1);
    expect(events.position('t', 'u')).toBe(3);

    expect(events.pruneBefore(150, 250)).toBe(3);
    expect(db.prepare("SELECT count(*) AS n FROM user_events WHERE user_id = 'u'").get()).toEqual({ n: 0 });
    expect(events.position('t', 'u')).toBe(3);
    expect(events.append('t', 'u', event(4), 300).seq).toBe(4);
    expect(events.position('t', 'v')).toBe(1);
    // Everything removed, the table empty: the numbers still go on.
    expect(events.pruneBefore(1_000, 1_000)).toBe(2);
    expect(events.append('t', 'u', event(5), 2_000).seq).toBe(5);
    expect(events.append('t', 'v', event(6), 2_000).seq).toBe(2);
    expect(events.append('t2', 'u', event(7), 2_000).seq).toBe(1);
  });

  test('a counter row written before (one per stream, bumped at every event) counts too', () => {
    const { events, db } = storeWith([]);
    db.prepare(
      "INSERT INTO user_streams (tenant_id, user_id, last_seq) VALUES ('t', 'ahead', 10), ('t', 'behind', 1)",
    ).run();
    expect(events.position('t', 'ahead')).toBe(10);
    expect(events.append('t', 'ahead', event(1), 100).seq).toBe(11);
    events.append('t', 'behind', event(1), 100);
    expect(events.append('t', 'behind', event(2), 100).seq).toBe(3);
  });
});
