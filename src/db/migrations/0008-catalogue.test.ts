import Database from 'better-sqlite3';
import { expect, test } from 'vitest';
import { migrate, MIGRATIONS } from '../migrate.js';
import { migration0008 } from './0008-catalogue.js';

test("0008 adds the catalogue cursor and cat_rev to a version-7 database; provisioned rows are not the central's", () => {
  const db = new Database(':memory:');
  db.pragma('foreign_keys = ON');
  const upTo7 = MIGRATIONS.filter((m) => m.version <= 7);
  expect(migrate(db, upTo7)).toBe(7);
  db.prepare("INSERT INTO tenants (id, name) VALUES ('t', 'T')").run();
  db.prepare(
    "INSERT INTO staff_users (tenant_id, id, username, password_hash, scope) VALUES ('t', 'u', 'kelner', 'h', 'read write')",
  ).run();
  db.prepare("INSERT INTO menus (tenant_id, id, root_json) VALUES ('t', 'm', '{}')").run();

  expect(migrate(db, [...upTo7, migration0008])).toBe(8);
  expect(db.prepare('SELECT id, cat_rev FROM staff_users').all()).toEqual([{ id: 'u', cat_rev: null }]);
  expect(db.prepare('SELECT id, cat_rev FROM menus').all()).toEqual([{ id: 'm', cat_rev: null }]);
  expect(db.prepare('SELECT tenant_id, rev, checksum, last_error FROM catalogue_state').all()).toEqual([
    { tenant_id: null, rev: 0, checksum: null, last_error: null },
  ]);
  // One cursor row only; headquarters' flags keyed by tenant, venue, product; STRICT columns.
  expect(() => db.prepare('INSERT INTO catalogue_state (id, rev) VALUES (2, 0)').run()).toThrow(/CHECK/);
  const flag = db.prepare(
    'INSERT INTO hq_sold_out (tenant_id, venue_id, product_id, reason, since_ms, cat_rev) VALUES (?, ?, ?, ?, ?, ?)',
  );
  flag.run('t', 'v', 'p', '', 1, 3);
  expect(() => flag.run('t', 'v', 'p', '', 1, 4)).toThrow(/UNIQUE/);
  expect(() => flag.run('t', 'v', 'q', '', 'soon', 4)).toThrow();
});
