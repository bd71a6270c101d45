import Database from 'better-sqlite3';
import { expect, test } from 'vitest';
import { migrate } from '../../db/migrate.js';
import type { Outbox } from '../sync/up/outbox.js';
import type { VenueRepo } from '../venues/repo.js';
import type { MenuRepo } from './repo.js';
import { createSoldOutFlags } from './sold-out.js';

test("a product is sold out at a venue while the staff flag or headquarters' flag is set there, and only there", () => {
  const db = new Database(':memory:');
  migrate(db);
  db.pragma('foreign_keys = OFF'); // flags without their tenant, venue and menu rows: only the lookup is looked at
  const flags = createSoldOutFlags(db, {} as MenuRepo, {} as VenueRepo, {} as Outbox);
  db.exec(`INSERT INTO product_locks (tenant_id, venue_id, product_id, reason, since_ms) VALUES ('t', 'v1', 'zurek', 'out', 1);
    INSERT INTO hq_sold_out (tenant_id, venue_id, product_id, reason, since_ms, cat_rev) VALUES ('t', 'v1', 'bigos', 'recall', 1, 1);`);
  const out = (venue: string, product: string, tenant = 't') => flags.isSoldOut(tenant, venue, product);
  expect([out('v1', 'zurek'), out('v1', 'bigos'), out('v1', 'pierogi')]).toEqual([true, true, false]);
  expect([out('v2', 'zurek'), out('v2', 'bigos'), out('v1', 'zurek', 'u'), out('v1', 'bigos', 'u')]).toEqual([
    false,
    false,
    false,
    false,
  ]);
  db.exec("DELETE FROM hq_sold_out; INSERT INTO product_locks VALUES ('t', 'v1', 'bigos', 'out', 2)");
  expect(out('v1', 'bigos')).toBe(true);
  db.exec('DELETE FROM product_locks');
  expect([out('v1', 'zurek'), out('v1', 'bigos')]).toEqual([false, false]);
});
