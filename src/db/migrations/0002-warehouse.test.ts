import Database from 'better-sqlite3';
import { expect, test } from 'vitest';
import { migrate } from '../migrate.js';
import { migration0001 } from './0001-initial.js';
import { migration0002 } from './0002-warehouse.js';

test('0002 adds the stock tables to a version-1 database and keeps its warehouses', () => {
  const db = new Database(':memory:');
  db.pragma('foreign_keys = ON');
  expect(migrate(db, [migration0001])).toBe(1);
  db.prepare("INSERT INTO tenants (id, name) VALUES ('t', 'T')").run();
  db.prepare("INSERT INTO warehouses (tenant_id, id, name) VALUES ('t', 'w', 'Magazyn')").run();

  expect(migrate(db, [migration0001, migration0002])).toBe(2);
  expect(db.pragma('user_version', { simple: true })).toBe(2);
  expect(db.prepare('SELECT tenant_id, id, name FROM warehouses').all()).toEqual([
    { tenant_id: 't', id: 'w', name: 'Magazyn' },
  ]);

  db.prepare("INSERT INTO stock_balances VALUES ('t', 'w', 'milk', 'l', 1500000)").run();
  // STRICT tables, tenant-scoped foreign keys, no negative stock.
  expect(() => db.prepare("INSERT INTO stock_balances VALUES ('t', 'w', 'egg', 'l', 'many')").run()).toThrow();
  expect(() => db.prepare("INSERT INTO stock_balances VALUES ('t', 'nowhere', 'egg', 'l', 1)").run()).toThrow(
    /FOREIGN KEY/,
  );
  expect(() => db.prepare("INSERT INTO stock_balances VALUES ('t', 'w', 'egg', 'l', -1)").run()).toThrow(/CHECK/);
  expect(() => db.prepare("INSERT INTO stock_locks VALUES ('t', 'w', 'egg', 'u', 0, 1)").run()).toThrow(/CHECK/);
});
