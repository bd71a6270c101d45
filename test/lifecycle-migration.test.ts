import Database from 'better-sqlite3';
import { expect, test } from 'vitest';
import { MIGRATIONS, migrate } from '../src/db/migrate.js';

test('migration 3 (order lifecycle): orders and lines written at version 2 survive, with no rounds yet', () => {
  const db = new Database(':memory:');
  migrate(
    db,
    MIGRATIONS.filter((m) => m.version < 3),
  );
  expect(db.pragma('user_version', { simple: true })).toBe(2);
  db.exec(`
    INSERT INTO orders (tenant_id, id, order_type, status, claim_code, total_minor, edit_total_minor, closed, completed,
      source, created_ms, changed_ms) VALUES ('t', 'o', 'TAKE_AWAY', 'NEW', '123456', 0, 1800, 0, 0, 'venue-box', 1, 1);
    INSERT INTO order_buckets (tenant_id, order_id, venue_id, position, claim_code, open) VALUES ('t', 'o', 'v', 0, '123456', 1);
    INSERT INTO order_lines (tenant_id, order_id, id, venue_id, position, creator, product_id, quantity, price_minor,
      status, product_json, created_ms, updated_ms) VALUES ('t', 'o', 'l', 'v', 0, 'u', 'zurek', 1, 1800, 'NEW', '{}', 1, 1);
  `);
  migrate(db);
  expect(db.pragma('user_version', { simple: true })).toBeGreaterThanOrEqual(3);
  expect(db.prepare('SELECT status, rounds, edit_total_minor FROM orders').get()).toEqual({
    status: 'NEW',
    rounds: 0,
    edit_total_minor: 1800,
  });
  expect(
    db
      .prepare(`SELECT json_extract(lines_json, '$[0].id') AS id, json_extract(lines_json, '$[0].status') AS status,
    json_extract(lines_json, '$[0].round') AS round FROM orders`)
      .get(),
  ).toEqual({ id: 'l', status: 'NEW', round: null });
  expect(db.prepare('SELECT COUNT(*) AS n FROM print_jobs').get()).toEqual({ n: 0 });
  expect(db.prepare('SELECT COUNT(*) AS n FROM product_locks').get()).toEqual({ n: 0 });
  // print_jobs only takes the three kinds the spooler knows (an otherwise valid row: unrouted, no printer).
  expect(() =>
    db
      .prepare(`INSERT INTO print_jobs (tenant_id, id, venue_id, order_id, kind, round, payload_json, state, created_ms)
    VALUES ('t', 'j', 'v', 'o', 'receipt', 1, '{}', 'unrouted', 1)`)
      .run(),
  ).toThrow(/CHECK constraint failed: kind/);
  db.close();
});
