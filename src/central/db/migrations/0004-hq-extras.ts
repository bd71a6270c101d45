/**
 * Headquarters runs the chain (docs/sync.md "Menu images", "Documents from headquarters", "Orders created at the
 * central"). `media`: images uploaded by headquarters, content-addressed by sha256 per tenant. `hq_inbox`:
 * documents and orders for one venue's box; each takes the tenant's next catalogue rev (catalogue_revs), so it
 * travels in the same long poll after the same cursor; `result_*` is what a box reported (its `inbox.result`
 * event). `devices.catalogue_rev`: the cursor a box last asked with, so everything up to it is acknowledged.
 */
export const sql = `
CREATE TABLE media (
  tenant_id text NOT NULL REFERENCES tenants,
  sha256 text NOT NULL,
  content_type text NOT NULL,
  bytes integer NOT NULL,
  data bytea NOT NULL,
  created_by text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant_id, sha256)
);

CREATE TABLE hq_inbox (
  tenant_id text NOT NULL REFERENCES tenants,
  entry_id text NOT NULL,
  venue_id text NOT NULL,
  kind text NOT NULL CHECK (kind IN ('document', 'order')),
  body jsonb NOT NULL,
  rev bigint NOT NULL,
  created_by text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  result_status text CHECK (result_status IN ('applied', 'rejected')),
  result_codes jsonb,
  result_device text,
  result_at timestamptz,
  PRIMARY KEY (tenant_id, entry_id),
  FOREIGN KEY (tenant_id, venue_id) REFERENCES venues
);
CREATE INDEX hq_inbox_venue_rev ON hq_inbox (tenant_id, venue_id, rev);

ALTER TABLE devices ADD COLUMN catalogue_rev bigint NOT NULL DEFAULT 0;
`;
