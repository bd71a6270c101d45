import Database from 'better-sqlite3';
import { expect, test } from 'vitest';
import { migrate } from '../../db/migrate.js';
import { createAuthRepo } from './repo.js';

test('a tenant provisioned after a request that did not find it is found at the next request', () => {
  const db = new Database(':memory:');
  migrate(db);
  const repo = createAuthRepo(db);
  expect(repo.tenantExists('t1')).toBe(false);
  db.prepare("INSERT INTO tenants (id, name) VALUES ('t1', 'Bistro')").run();
  expect(repo.tenantExists('t1')).toBe(true);
  expect(repo.tenantExists('t2')).toBe(false);
});
