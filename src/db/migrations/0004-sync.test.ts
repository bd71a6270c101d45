import Database from 'better-sqlite3';
import { expect, test } from 'vitest';
import { migrate, MIGRATIONS } from '../migrate.js';

test('0004 adds the outbox and sync state to a version-3 database and keeps its orders', () => {
  const db = new Database(':memory:');
  db.pragma('foreign_keys = ON');
  expect(migrate(db, MIGRATIONS.slice(0, 3))).toBe(3);
  db.prepare(`INSERT INTO orders (tenant_id, id, order_type, status, claim_code, total_minor, edit_total_minor, closed,
    completed, source, created_ms, changed_ms) VALUES ('t', 'o', 'TAKE_AWAY', 'NEW', '123456', 0, 0, 0, 0, 'venue-box', 1, 1)`).run();

  expect(migrate(db, MIGRATIONS.slice(0, 4))).toBe(4);
  expect(db.prepare('SELECT id, status, version FROM orders').all()).toEqual([{ id: 'o', status: 'NEW', version: 0 }]);
  expect(db.prepare('SELECT epoch, acked_seq, acked_hash, backfilled FROM sync_state').get()).toEqual({
    epoch: 1,
    acked_seq: 0,
    acked_hash: '0'.repeat(64),
    backfilled: 0,
  });
  // One state row only; STRICT columns.
  expect(() =>
    db.prepare('INSERT INTO sync_state (id, epoch, acked_seq, acked_hash) VALUES (2, 1, 0, ?)').run('x'),
  ).toThrow(/CHECK/);
  expect(() =>
    db
      .prepare(`INSERT INTO sync_outbox (event_id, tenant_id, kind, aggregate_id, envelope, chain_hash, created_ms)
    VALUES ('e', 't', 'k', 'a', '{}', 'h', 'soon')`)
      .run(),
  ).toThrow();
});
