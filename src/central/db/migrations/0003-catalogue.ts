/**
 * The catalogue, headquarters' data that travels down to the boxes (docs/sync.md "Down: the catalogue"). Every row
 * keeps the `rev` of its last change and `retired` rows stay as tombstones, so "the changes after cursor N" is
 * the rows with rev > N. catalogue_revs holds each tenant's counter: a change takes the next rev with
 * `UPDATE ... RETURNING` in its own transaction, which locks the row until COMMIT, so a tenant's changes commit
 * in rev order and a reader never sees rev N+1 without N. rev 0: a row the catalogue does not hold (written
 * before this migration, or a warehouse a box created), never sent down until headquarters writes it.
 * `purged_rev`: tombstones up to it were removed; a box whose cursor is older gets a snapshot.
 */
export const sql = `
CREATE TABLE catalogue_revs (
  tenant_id text PRIMARY KEY REFERENCES tenants,
  rev bigint NOT NULL DEFAULT 0,
  purged_rev bigint NOT NULL DEFAULT 0
);
INSERT INTO catalogue_revs (tenant_id) SELECT tenant_id FROM tenants;

ALTER TABLE tenants ADD COLUMN rev bigint NOT NULL DEFAULT 0;
ALTER TABLE oauth_clients ADD COLUMN rev bigint NOT NULL DEFAULT 0, ADD COLUMN retired_at timestamptz;
ALTER TABLE venues ADD COLUMN rev bigint NOT NULL DEFAULT 0, ADD COLUMN retired_at timestamptz;
ALTER TABLE warehouses ADD COLUMN rev bigint NOT NULL DEFAULT 0, ADD COLUMN retired_at timestamptz;

-- The box's staff users (headquarters' own users are hq_users). id = staffUserId(tenant, username).
CREATE TABLE staff_users (
  tenant_id text NOT NULL REFERENCES tenants,
  user_id text NOT NULL,
  username text NOT NULL,
  password_hash text NOT NULL,
  scope text NOT NULL,
  rev bigint NOT NULL,
  retired_at timestamptz,
  PRIMARY KEY (tenant_id, user_id),
  UNIQUE (tenant_id, username)
);

CREATE TABLE menus (
  tenant_id text NOT NULL REFERENCES tenants,
  menu_id text NOT NULL,
  root jsonb NOT NULL,
  rev bigint NOT NULL,
  retired_at timestamptz,
  PRIMARY KEY (tenant_id, menu_id)
);

-- Headquarters' sold-out flag; the staff flag a box sets is sold_out (projected from its events).
CREATE TABLE hq_sold_out (
  tenant_id text NOT NULL REFERENCES tenants,
  venue_id text NOT NULL,
  product_id text NOT NULL,
  reason text NOT NULL,
  rev bigint NOT NULL,
  retired_at timestamptz,
  PRIMARY KEY (tenant_id, venue_id, product_id)
);

-- "Changes after N" reads each table by (tenant, rev).
CREATE INDEX oauth_clients_rev ON oauth_clients (tenant_id, rev);
CREATE INDEX venues_rev ON venues (tenant_id, rev);
CREATE INDEX warehouses_rev ON warehouses (tenant_id, rev);
CREATE INDEX staff_users_rev ON staff_users (tenant_id, rev);
CREATE INDEX menus_rev ON menus (tenant_id, rev);
CREATE INDEX hq_sold_out_rev ON hq_sold_out (tenant_id, rev);
`;
