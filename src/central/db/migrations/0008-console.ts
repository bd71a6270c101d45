/**
 * The headquarters console (docs/sync.md "The headquarters console"). `devices.oldest_pending_at`: when the
 * oldest event a box has not had acknowledged was written, on the central's clock (the hello's `oldestPendingMs`
 * less the clock offset measured at that hello); null when the box has nothing waiting or never said.
 * `devices.catalogue_rev_at`: when the box first asked with its present `catalogue_rev`, that is when it had
 * applied that rev ("when the boxes got it"); null before its first ask.
 * `catalogue_authors`: which headquarters user made each catalogue rev through the API, so a refused If-Match can
 * say who changed the row (a rev written by `central import` or provisioning has no author).
 */
export const sql = `
ALTER TABLE devices ADD COLUMN oldest_pending_at timestamptz, ADD COLUMN catalogue_rev_at timestamptz;

CREATE TABLE catalogue_authors (
  tenant_id text NOT NULL REFERENCES tenants,
  rev bigint NOT NULL,
  user_id text NOT NULL,
  PRIMARY KEY (tenant_id, rev)
);
`;
