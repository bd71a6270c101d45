import Database from 'better-sqlite3';
import { describe, expect, test } from 'vitest';
import { type Migration, MIGRATIONS, migrate } from './migrate.js';

const latest = MIGRATIONS.at(-1)!.version;

describe('migrate', () => {
  test('numbers are 1..N in order, each once', () => {
    expect(MIGRATIONS.map((m) => m.version)).toEqual(Array.from({ length: MIGRATIONS.length }, (_, i) => i + 1));
  });

  test('an empty database reaches the latest version; running again changes nothing', () => {
    const db = new Database(':memory:');
    expect(migrate(db)).toBe(latest);
    expect(db.pragma('user_version', { simple: true })).toBe(latest);
    const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all();
    migrate(db);
    expect(db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all()).toEqual(tables);
  });

  test('a database newer than the code refuses to start', () => {
    const db = new Database(':memory:');
    db.pragma(`user_version = ${latest + 1}`);
    expect(() => migrate(db)).toThrow(/newer than this venue-box/);
  });

  test('rows written at N-1 survive the step to N, and a failing step rolls back whole', () => {
    const db = new Database(':memory:');
    migrate(db, MIGRATIONS.slice(0, 1));
    db.prepare("INSERT INTO tenants (id, name) VALUES ('t', 'Tenant')").run();
    const broken: Migration = {
      version: 2,
      name: 'broken',
      up: 'CREATE TABLE half (x INTEGER); SELECT * FROM missing;',
    };
    expect(() => migrate(db, [MIGRATIONS[0]!, broken])).toThrow();
    expect(db.pragma('user_version', { simple: true })).toBe(1);
    expect(db.prepare("SELECT name FROM sqlite_master WHERE name = 'half'").get()).toBeUndefined();
    migrate(db);
    expect(db.prepare('SELECT name FROM tenants').all()).toEqual([{ name: 'Tenant' }]);
  });
});
