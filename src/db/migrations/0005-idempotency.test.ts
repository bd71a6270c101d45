import Database from 'better-sqlite3';
import { expect, test } from 'vitest';
import { migrate, MIGRATIONS } from '../migrate.js';
import { migration0005 } from './0005-idempotency.js';

test('0005 adds idempotency keys to a version-4 database and keeps its order commands', () => {
  const db = new Database(':memory:');
  db.pragma('foreign_keys = ON');
  const upTo4 = MIGRATIONS.filter((m) => m.version <= 4);
  expect(migrate(db, upTo4)).toBe(4);
  db.prepare(`INSERT INTO order_commands (correlation_id, tenant_id, user_id, staff, order_id, kind, body_json, confirmed_ms)
    VALUES ('c', 't', 'u', 0, 'o', 'new', '{}', 1)`).run();

  expect(migrate(db, [...upTo4, migration0005])).toBe(5);
  expect(db.pragma('user_version', { simple: true })).toBe(5);
  expect(db.prepare('SELECT correlation_id, kind, processed_ms FROM order_commands').all()).toEqual([
    { correlation_id: 'c', kind: 'new', processed_ms: null },
  ]);

  const insert =
    db.prepare(`INSERT INTO idempotency_keys (tenant_id, user_id, idempotency_key, fingerprint, correlation_id,
    response, created_ms) VALUES (?, ?, ?, 'f', 'c', '{}', ?)`);
  insert.run('t', 'u', 'k', 1);
  // The key is scoped to the tenant and the user: the same key of another user is another row.
  insert.run('t', 'u2', 'k', 1);
  insert.run('t2', 'u', 'k', 1);
  expect(() => insert.run('t', 'u', 'k', 2)).toThrow(/UNIQUE/);
  // STRICT columns.
  expect(() => insert.run('t', 'u', 'k2', 'yesterday')).toThrow();
  expect(db.prepare('SELECT count(*) FROM idempotency_keys').pluck().get()).toBe(3);
});
