import type { Migration } from '../migrate.js';

/** Tenants, auth, venues, menus, warehouses, order commands, orders and their socket events. */
export const migration0001: Migration = {
  version: 1,
  name: 'initial',
  up: `
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) STRICT;

CREATE TABLE tenants (id TEXT PRIMARY KEY, name TEXT NOT NULL) STRICT;

CREATE TABLE oauth_clients (
  tenant_id TEXT NOT NULL REFERENCES tenants(id),
  client_id TEXT NOT NULL,
  secret_hash TEXT NOT NULL,
  PRIMARY KEY (tenant_id, client_id)
) STRICT;

CREATE TABLE staff_users (
  tenant_id TEXT NOT NULL REFERENCES tenants(id),
  id TEXT NOT NULL,
  username TEXT NOT NULL,
  password_hash TEXT NOT NULL,
  scope TEXT NOT NULL,
  PRIMARY KEY (tenant_id, id),
  UNIQUE (tenant_id, username)
) STRICT;

CREATE TABLE refresh_tokens (
  token_hash TEXT PRIMARY KEY,
  tenant_id TEXT NOT NULL REFERENCES tenants(id),
  family_id TEXT NOT NULL,
  client_id TEXT NOT NULL,
  user_id TEXT NOT NULL,
  scope TEXT NOT NULL,
  staff INTEGER NOT NULL,
  expires_ms INTEGER NOT NULL,
  used_ms INTEGER,
  revoked INTEGER NOT NULL DEFAULT 0
) STRICT;
CREATE INDEX refresh_tokens_family ON refresh_tokens (tenant_id, family_id);
CREATE INDEX refresh_tokens_expiry ON refresh_tokens (expires_ms);

CREATE TABLE warehouses (
  tenant_id TEXT NOT NULL REFERENCES tenants(id),
  id TEXT NOT NULL,
  name TEXT NOT NULL,
  PRIMARY KEY (tenant_id, id)
) STRICT;

CREATE TABLE menus (
  tenant_id TEXT NOT NULL REFERENCES tenants(id),
  id TEXT NOT NULL,
  root_json TEXT NOT NULL,
  PRIMARY KEY (tenant_id, id)
) STRICT;

CREATE TABLE products (
  tenant_id TEXT NOT NULL,
  menu_id TEXT NOT NULL,
  id TEXT NOT NULL,
  name TEXT NOT NULL,
  price_minor INTEGER NOT NULL,
  channels TEXT,
  snapshot_json TEXT NOT NULL,
  PRIMARY KEY (tenant_id, menu_id, id),
  FOREIGN KEY (tenant_id, menu_id) REFERENCES menus(tenant_id, id) ON DELETE CASCADE
) STRICT;

CREATE TABLE venues (
  tenant_id TEXT NOT NULL REFERENCES tenants(id),
  id TEXT NOT NULL,
  menu_id TEXT NOT NULL,
  warehouse_id TEXT,
  lat REAL NOT NULL,
  lng REAL NOT NULL,
  venue_json TEXT NOT NULL,
  PRIMARY KEY (tenant_id, id)
) STRICT;

-- Confirmed order commands: written and fsynced before the 200 confirmation, processed in seq order.
CREATE TABLE order_commands (
  seq INTEGER PRIMARY KEY,
  correlation_id TEXT NOT NULL UNIQUE,
  tenant_id TEXT NOT NULL,
  user_id TEXT NOT NULL,
  staff INTEGER NOT NULL,
  order_id TEXT NOT NULL,
  kind TEXT NOT NULL,
  body_json TEXT NOT NULL,
  confirmed_ms INTEGER NOT NULL,
  processed_ms INTEGER,
  outcome TEXT
) STRICT;
CREATE INDEX order_commands_pending ON order_commands (seq) WHERE processed_ms IS NULL;

CREATE TABLE orders (
  tenant_id TEXT NOT NULL,
  id TEXT NOT NULL,
  order_type TEXT NOT NULL,
  status TEXT NOT NULL,
  claim_code TEXT NOT NULL,
  total_minor INTEGER NOT NULL,
  edit_total_minor INTEGER NOT NULL,
  closed INTEGER NOT NULL,
  completed INTEGER NOT NULL,
  source TEXT NOT NULL,
  contact_json TEXT,
  extra_json TEXT,
  created_ms INTEGER NOT NULL,
  changed_ms INTEGER NOT NULL,
  PRIMARY KEY (tenant_id, id)
) STRICT;

CREATE TABLE order_buckets (
  tenant_id TEXT NOT NULL,
  order_id TEXT NOT NULL,
  venue_id TEXT NOT NULL,
  position INTEGER NOT NULL,
  claim_code TEXT NOT NULL,
  open INTEGER NOT NULL,
  PRIMARY KEY (tenant_id, order_id, venue_id),
  FOREIGN KEY (tenant_id, order_id) REFERENCES orders(tenant_id, id)
) STRICT;
-- A claim code is unique among the venue's open orders.
CREATE UNIQUE INDEX order_buckets_claim ON order_buckets (tenant_id, venue_id, claim_code) WHERE open = 1;

CREATE TABLE order_lines (
  tenant_id TEXT NOT NULL,
  order_id TEXT NOT NULL,
  id TEXT NOT NULL,
  venue_id TEXT NOT NULL,
  position INTEGER NOT NULL,
  creator TEXT NOT NULL,
  product_id TEXT NOT NULL,
  quantity INTEGER NOT NULL,
  price_minor INTEGER NOT NULL,
  status TEXT NOT NULL,
  product_json TEXT NOT NULL,
  created_ms INTEGER NOT NULL,
  updated_ms INTEGER NOT NULL,
  PRIMARY KEY (tenant_id, order_id, id),
  FOREIGN KEY (tenant_id, order_id) REFERENCES orders(tenant_id, id)
) STRICT;

CREATE TABLE order_users (
  tenant_id TEXT NOT NULL,
  order_id TEXT NOT NULL,
  user_id TEXT NOT NULL,
  roles TEXT NOT NULL,
  PRIMARY KEY (tenant_id, order_id, user_id),
  FOREIGN KEY (tenant_id, order_id) REFERENCES orders(tenant_id, id)
) STRICT;
CREATE INDEX order_users_user ON order_users (tenant_id, user_id);

-- Per-user event stream for the socket: every frame a user gets has the next seq of that user.
CREATE TABLE user_streams (
  tenant_id TEXT NOT NULL,
  user_id TEXT NOT NULL,
  last_seq INTEGER NOT NULL,
  PRIMARY KEY (tenant_id, user_id)
) STRICT;

CREATE TABLE user_events (
  tenant_id TEXT NOT NULL,
  user_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  type TEXT NOT NULL,
  payload_json TEXT NOT NULL,
  created_ms INTEGER NOT NULL,
  PRIMARY KEY (tenant_id, user_id, seq)
) STRICT;
CREATE INDEX user_events_age ON user_events (created_ms);
`,
};
