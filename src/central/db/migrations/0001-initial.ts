/**
 * The central's first schema. Every primary key and unique constraint starts with tenant_id, so the tables
 * distribute on Citus by tenant (docs/sync.md "The central node"). Ids are text: a box's id that is not a UUID is then a
 * dead letter or a 404, never a cast error (a 500) in the middle of a batch.
 */
export const sql = `
CREATE TABLE tenants (
  tenant_id text PRIMARY KEY,
  name text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE oauth_clients (
  tenant_id text NOT NULL REFERENCES tenants,
  client_id text NOT NULL,
  secret_hash text NOT NULL,
  PRIMARY KEY (tenant_id, client_id)
);

CREATE TABLE hq_users (
  tenant_id text NOT NULL REFERENCES tenants,
  username text NOT NULL,
  user_id text NOT NULL,
  password_hash text NOT NULL,
  scope text NOT NULL,
  PRIMARY KEY (tenant_id, username),
  UNIQUE (tenant_id, user_id)
);

CREATE TABLE refresh_tokens (
  tenant_id text NOT NULL REFERENCES tenants,
  token_hash text NOT NULL,
  family_id text NOT NULL,
  client_id text NOT NULL,
  user_id text NOT NULL,
  scope text NOT NULL,
  expires_at timestamptz NOT NULL,
  used_at timestamptz,
  revoked boolean NOT NULL DEFAULT false,
  PRIMARY KEY (tenant_id, token_hash)
);
CREATE INDEX refresh_tokens_family ON refresh_tokens (tenant_id, family_id);

CREATE TABLE venues (
  tenant_id text NOT NULL REFERENCES tenants,
  venue_id text NOT NULL,
  name text NOT NULL,
  document jsonb NOT NULL,
  PRIMARY KEY (tenant_id, venue_id)
);

CREATE TABLE warehouses (
  tenant_id text NOT NULL REFERENCES tenants,
  warehouse_id text NOT NULL,
  name text NOT NULL,
  PRIMARY KEY (tenant_id, warehouse_id)
);

-- Only the sha256 of a code is stored. A code is looked up before its tenant is known, hence the plain index.
CREATE TABLE enrol_codes (
  tenant_id text NOT NULL REFERENCES tenants,
  code_hash text NOT NULL,
  venue_id text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL,
  used_at timestamptz,
  device_id text,
  PRIMARY KEY (tenant_id, code_hash),
  FOREIGN KEY (tenant_id, venue_id) REFERENCES venues
);
CREATE INDEX enrol_codes_code_hash ON enrol_codes (code_hash);

CREATE TABLE devices (
  tenant_id text NOT NULL REFERENCES tenants,
  device_id text NOT NULL,
  venue_id text NOT NULL,
  name text,
  public_key bytea NOT NULL,
  key_id text NOT NULL,
  status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'revoked')),
  head_epoch integer NOT NULL DEFAULT 0,
  head_seq bigint NOT NULL DEFAULT 0,
  head_hash text NOT NULL,
  pending_seq bigint NOT NULL DEFAULT 0,
  last_contact_at timestamptz,
  clock_offset_ms bigint,
  enrolled_at timestamptz NOT NULL DEFAULT now(),
  revoked_at timestamptz,
  PRIMARY KEY (tenant_id, device_id),
  FOREIGN KEY (tenant_id, venue_id) REFERENCES venues
);

-- Raw events, byte-exact as received, partitioned by the central's receive month (partitions.ts makes them).
-- A partitioned table's keys must include the partition column, so (device, seq) is unique per partition
-- only; across months uniqueness comes from the device head, locked FOR UPDATE by every ingest.
CREATE TABLE sync_events (
  tenant_id text NOT NULL,
  device_id text NOT NULL,
  seq bigint NOT NULL,
  epoch integer NOT NULL,
  event_id uuid,
  kind text,
  stream text,
  aggregate_id text,
  envelope text NOT NULL,
  chain_hash text NOT NULL,
  received_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, device_id, seq, received_at)
) PARTITION BY RANGE (received_at);
CREATE TABLE sync_events_default PARTITION OF sync_events DEFAULT;

CREATE TABLE sync_dead_letters (
  tenant_id text NOT NULL,
  device_id text NOT NULL,
  seq bigint NOT NULL,
  event_id text,
  reason text NOT NULL,
  envelope text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, device_id, seq)
);

CREATE TABLE orders (
  tenant_id text NOT NULL,
  order_id text NOT NULL,
  device_id text NOT NULL,
  version integer NOT NULL,
  last_seq bigint NOT NULL,
  status text NOT NULL,
  venue_ids text[] NOT NULL,
  created_at timestamptz NOT NULL,
  data jsonb NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, order_id)
);
CREATE INDEX orders_newest ON orders (tenant_id, created_at DESC, order_id DESC);
CREATE INDEX orders_venues ON orders USING gin (venue_ids);

CREATE TABLE order_versions (
  tenant_id text NOT NULL,
  order_id text NOT NULL,
  device_id text NOT NULL,
  seq bigint NOT NULL,
  version integer NOT NULL,
  data jsonb NOT NULL,
  command jsonb NOT NULL,
  received_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, order_id, device_id, seq)
);

CREATE TABLE stock_documents (
  tenant_id text NOT NULL,
  document_id text NOT NULL,
  device_id text NOT NULL,
  seq bigint NOT NULL,
  warehouse_id text NOT NULL,
  target_warehouse_id text,
  kind text NOT NULL,
  number text NOT NULL,
  created_at timestamptz NOT NULL,
  data jsonb NOT NULL,
  PRIMARY KEY (tenant_id, document_id)
);
CREATE INDEX stock_documents_newest ON stock_documents (tenant_id, warehouse_id, created_at DESC, document_id DESC);

CREATE TABLE stock_ledger (
  tenant_id text NOT NULL,
  document_id text NOT NULL,
  warehouse_id text NOT NULL,
  line integer NOT NULL,
  item_id text NOT NULL,
  unit text NOT NULL,
  delta_micro bigint NOT NULL,
  PRIMARY KEY (tenant_id, document_id, warehouse_id, line, item_id)
);

CREATE TABLE stock_balances (
  tenant_id text NOT NULL,
  warehouse_id text NOT NULL,
  item_id text NOT NULL,
  unit text NOT NULL,
  qty_micro bigint NOT NULL,
  PRIMARY KEY (tenant_id, warehouse_id, item_id, unit)
);

-- The staff flag of sold out, set by a box; the HQ flag will travel down (docs/sync.md "Sync to the central node").
CREATE TABLE sold_out (
  tenant_id text NOT NULL,
  venue_id text NOT NULL,
  product_id text NOT NULL,
  menu_id text NOT NULL,
  reason text,
  device_id text NOT NULL,
  changed_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, venue_id, product_id)
);
`;
