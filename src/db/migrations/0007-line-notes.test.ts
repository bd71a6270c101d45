import Database from 'better-sqlite3';
import { expect, test } from 'vitest';
import { migrate, MIGRATIONS } from '../migrate.js';
import { migration0007 } from './0007-line-notes.js';

test('0007 adds a note column to the order lines of a version-6 database, null on lines written before', () => {
  const db = new Database(':memory:');
  const upTo6 = MIGRATIONS.filter((m) => m.version <= 6);
  expect(migrate(db, upTo6)).toBe(6);
  db.prepare(`INSERT INTO orders (tenant_id, id, order_type, status, claim_code, total_minor, edit_total_minor, closed,
    completed, source, created_ms, changed_ms) VALUES ('t', 'o', 'TAKE_AWAY', 'NEW', '000001', 0, 0, 0, 0, 'box', 1, 1)`).run();
  const line = (id: string) =>
    db
      .prepare(`INSERT INTO order_lines (tenant_id, order_id, id, venue_id, position, creator, product_id,
    quantity, price_minor, status, product_json, created_ms, updated_ms) VALUES ('t', 'o', ?, 'v', 0, 'u', 'zurek', 1, 1800, 'NEW', '{}', 1, 1)`)
      .run(id);
  line('before');

  expect(migrate(db, [...upTo6, migration0007])).toBe(7);
  expect(db.prepare('SELECT id, note FROM order_lines').all()).toEqual([{ id: 'before', note: null }]);
  db.prepare("UPDATE order_lines SET note = 'bez cebuli' WHERE id = 'before'").run();
  expect(db.prepare('SELECT note FROM order_lines').get()).toEqual({ note: 'bez cebuli' });
  // STRICT: a note is text.
  expect(() => db.prepare("UPDATE order_lines SET note = x'00' WHERE id = 'before'").run()).toThrow();
});
