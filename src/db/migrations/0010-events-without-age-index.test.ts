import Database from 'better-sqlite3';
import { expect, test } from 'vitest';
import { createEventStore } from '../../modules/events/event-store.js';
import { orderChange } from '../../shared/socket-protocol.js';
import { migrate, MIGRATIONS } from '../migrate.js';
import { migration0010 } from './0010-events-without-age-index.js';

const upTo9 = MIGRATIONS.filter((m) => m.version <= 9);

test('0010 drops the age index of a version-9 database and keeps its events, their numbers and their retention', () => {
  const db = new Database(':memory:');
  expect(migrate(db, upTo9)).toBe(9);
  const insert = db.prepare(
    "INSERT INTO user_events (tenant_id, user_id, seq, type, payload_json, created_ms) VALUES ('t', ?, ?, 'ORDER_CHANGE', ?, ?)",
  );
  // Two streams, written interleaved; ala's counter row from before numbers came from the newest event.
  const written: [string, number, number][] = [
    ['ala', 1, 100],
    ['ola', 1, 110],
    ['ala', 2, 120],
    ['ola', 2, 200],
    ['ala', 3, 210],
  ];
  for (const [user, seq, at] of written) insert.run(user, seq, `{"n":${seq}}`, at);
  db.prepare("INSERT INTO user_streams (tenant_id, user_id, last_seq) VALUES ('t', 'ala', 3)").run();
  const before = db.prepare('SELECT rowid, * FROM user_events ORDER BY rowid').all();
  const ageIndex = "SELECT name FROM sqlite_master WHERE type = 'index' AND name = 'user_events_age'";
  expect(db.prepare(ageIndex).all()).toHaveLength(1);

  expect(migrate(db, [...upTo9, migration0010])).toBe(10);
  expect(db.prepare(ageIndex).all()).toEqual([]);
  expect(db.prepare('SELECT rowid, * FROM user_events ORDER BY rowid').all()).toEqual(before);
  expect(db.pragma('integrity_check', { simple: true })).toBe('ok');

  const events = createEventStore(db);
  expect([events.position('t', 'ala'), events.position('t', 'ola')]).toEqual([3, 2]);
  // Retention removes the prefix written before the first young event, reading them in write order.
  expect(events.pruneBefore(150, 250)).toBe(3);
  expect(db.prepare('SELECT user_id, seq FROM user_events ORDER BY rowid').all()).toEqual([
    { user_id: 'ola', seq: 2 },
    { user_id: 'ala', seq: 3 },
  ]);
  // Numbers go on after the removed ones.
  expect(events.append('t', 'ola', orderChange('{}'), 260).seq).toBe(3);
  expect(events.position('t', 'ala')).toBe(3);
});
