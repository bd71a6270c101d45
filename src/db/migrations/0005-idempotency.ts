import type { Migration } from '../migrate.js';

/**
 * Idempotent order commands (docs/api.md "Order commands", Idempotency-Key): the key of each confirmed command and
 * the confirmation it got, written in the same transaction as the command, so a retry after a crash between
 * the commit and the reply still finds it. Additive only.
 */
export const migration0005: Migration = {
  version: 5,
  name: 'idempotency',
  up: `
-- One row per key of a user: fingerprint is sha256 of the command's path and canonical body, response the
-- 200 body exactly as it was first sent (a retry gets these bytes again). correlation_id names the
-- order_commands row it confirmed. Rows older than ordering.idempotencyHours are pruned by a scheduled job.
CREATE TABLE idempotency_keys (
  tenant_id TEXT NOT NULL,
  user_id TEXT NOT NULL,
  idempotency_key TEXT NOT NULL,
  fingerprint TEXT NOT NULL,
  correlation_id TEXT NOT NULL,
  response TEXT NOT NULL,
  created_ms INTEGER NOT NULL,
  PRIMARY KEY (tenant_id, user_id, idempotency_key)
) STRICT;
CREATE INDEX idempotency_keys_age ON idempotency_keys (created_ms);
`,
};
