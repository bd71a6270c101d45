import type { Migration } from '../migrate.js';

/**
 * The catalogue from the central (docs/sync.md "Down: the catalogue"). `cat_rev`: the central's rev of the row's
 * last change, NULL for a row the central did not send (a provisioning file's, or a warehouse this box made);
 * the box's checksum covers the rows with a cat_rev. hq_sold_out: headquarters' sold-out flag, beside the
 * staff's product_locks (a product is unavailable while either is set). catalogue_state: the cursor, written
 * in the transaction that applies each change set, and the last failure to apply one.
 */
export const migration0008: Migration = {
  version: 8,
  name: 'catalogue',
  up: `
ALTER TABLE tenants ADD COLUMN cat_rev INTEGER;
ALTER TABLE oauth_clients ADD COLUMN cat_rev INTEGER;
ALTER TABLE staff_users ADD COLUMN cat_rev INTEGER;
ALTER TABLE warehouses ADD COLUMN cat_rev INTEGER;
ALTER TABLE menus ADD COLUMN cat_rev INTEGER;
ALTER TABLE venues ADD COLUMN cat_rev INTEGER;

CREATE TABLE hq_sold_out (
  tenant_id TEXT NOT NULL,
  venue_id TEXT NOT NULL,
  product_id TEXT NOT NULL,
  reason TEXT NOT NULL,
  since_ms INTEGER NOT NULL,
  cat_rev INTEGER NOT NULL,
  PRIMARY KEY (tenant_id, venue_id, product_id)
) STRICT;

CREATE TABLE catalogue_state (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  tenant_id TEXT,
  rev INTEGER NOT NULL,
  checksum TEXT,
  applied_ms INTEGER,
  last_error TEXT,
  last_error_ms INTEGER
) STRICT;
INSERT INTO catalogue_state (id, rev) VALUES (1, 0);
`,
};
