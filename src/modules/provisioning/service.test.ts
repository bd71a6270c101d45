import Database from 'better-sqlite3';
import { beforeEach, describe, expect, test } from 'vitest';
import demo from '../../../native-config/demo.json';
import { migrate } from '../../db/migrate.js';
import { createProvisioningRepo } from './repo.js';
import { ProvisioningError } from '../../shared/errors.js';
import { applyProvisioning, staffUserId } from './service.js';

let db: Database.Database;
beforeEach(() => {
  db = new Database(':memory:');
  migrate(db);
});
const count = (table: string) => (db.prepare(`SELECT COUNT(*) AS n FROM ${table}`).get() as { n: number }).n;

describe('provisioning', () => {
  test('the demo provisions every row once; applying it again changes nothing', () => {
    const repo = createProvisioningRepo(db);
    expect(applyProvisioning(repo, 'demo', demo)).toBe('applied');
    const counts = ['tenants', 'oauth_clients', 'staff_users', 'venues', 'menus', 'products', 'warehouses'].map(count);
    expect(counts).toEqual([1, 1, 2, 3, 1, 13, 3]);
    expect(applyProvisioning(repo, 'demo', demo)).toBe('unchanged');
    expect(['tenants', 'oauth_clients', 'staff_users', 'venues', 'menus', 'products', 'warehouses'].map(count)).toEqual(
      counts,
    );
  });

  test('secrets and passwords are stored as scrypt hashes, never as given', () => {
    applyProvisioning(createProvisioningRepo(db), 'demo', demo);
    const rows = db
      .prepare('SELECT password_hash AS h FROM staff_users UNION ALL SELECT secret_hash FROM oauth_clients')
      .all() as { h: string }[];
    for (const { h } of rows) expect(h).toMatch(/^scrypt\$16384\$8\$1\$/);
    expect(JSON.stringify(rows)).not.toContain('demo-kiosk-secret');
  });

  test('staff ids are stable UUIDs derived from tenant and username', () => {
    const id = staffUserId('t', 'kelner');
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-8[0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(staffUserId('t', 'kelner')).toBe(id);
    expect(staffUserId('t2', 'kelner')).not.toBe(id);
  });

  test('a document with bad shape or dangling references is refused and writes nothing', () => {
    const repo = createProvisioningRepo(db);
    const tenant = demo.tenants[0]!;
    expect(() => applyProvisioning(repo, 'x', { tenants: [{ ...tenant, id: 'not-a-uuid' }] })).toThrow(
      ProvisioningError,
    );
    const dangling = { tenants: [{ ...tenant, menus: [] }] };
    expect(() => applyProvisioning(repo, 'x', dangling)).toThrow(/unknown menu menu-krakow/);
    expect(count('tenants')).toBe(0);
  });
});
