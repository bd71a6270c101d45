import Database from 'better-sqlite3';
import { describe, expect, test } from 'vitest';
import { migrate } from '../../db/migrate.js';
import { createEventStore } from './event-store.js';

const HOUR = 3_600_000;

function storeWith(stamps: number[]) {
  const db = new Database(':memory:');
  migrate(db);
  const events = createEventStore(db);
  stamps.forEach((ms, i) => events.append('t', `u${i % 3}`, { type: 'NOTIFICATION', payloadJson: `{"n":${i}}` }, ms));
  const left = () => (db.prepare('SELECT created_ms FROM user_events ORDER BY rowid').all() as { created_ms: number }[])
    .map((r) => r.created_ms);
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

  test('reads the table in rowid order, with no index on the age (every command would write it)', () => {
    const { db } = storeWith([]);
    expect(db.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'user_events' AND sql IS NOT NULL").all()).toEqual([]);
    const plan = db.prepare(`EXPLAIN QUERY PLAN SELECT rowid FROM user_events
      WHERE created_ms >= 1 AND created_ms <= 2 ORDER BY rowid LIMIT 1`).all() as { detail: string }[];
    expect(plan.map((p) => p.detail)).toEqual(['SCAN user_events']);
  });
});
