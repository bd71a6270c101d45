import type { Migration } from '../migrate.js';

/**
 * Sync to the central node (docs/sync.md "Sync to the central node"): the outbox every change writes in its own
 * transaction, the sender's position, the events the central set aside, and each order's version. Additive
 * only; what the box already holds is put into the outbox once at the next start (src/modules/sync/backfill.ts).
 */
export const migration0004: Migration = {
  version: 4,
  name: 'sync',
  up: `
-- One row per change, written in the transaction of the change. The box is one device, and seq is its
-- position in the device's single sequence (never reused: AUTOINCREMENT), so the key is seq alone, not a
-- tenant's. envelope is the exact text that is sent, hashed and kept by the central; chain_hash =
-- sha256(chain_hash of seq - 1 || envelope). Rows stay after the central acknowledges them, for the retention
-- period, so a central restored from an older backup can be sent them again.
CREATE TABLE sync_outbox (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  event_id TEXT NOT NULL UNIQUE,
  tenant_id TEXT NOT NULL,
  kind TEXT NOT NULL,
  aggregate_id TEXT NOT NULL,
  envelope TEXT NOT NULL,
  chain_hash TEXT NOT NULL,
  created_ms INTEGER NOT NULL
) STRICT;

-- The sender's position: the last event the central acknowledged, and the epoch new events are sent in.
CREATE TABLE sync_state (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  epoch INTEGER NOT NULL,
  acked_seq INTEGER NOT NULL,
  acked_hash TEXT NOT NULL,
  last_success_ms INTEGER,
  last_error TEXT,
  last_error_ms INTEGER,
  backfilled INTEGER NOT NULL DEFAULT 0
) STRICT;
INSERT INTO sync_state (id, epoch, acked_seq, acked_hash) VALUES (1, 1, 0, '${'0'.repeat(64)}');

-- Events the central kept aside as breaking a rule (it still moved past them): shown by sync status.
CREATE TABLE sync_dead_letters (
  seq INTEGER PRIMARY KEY,
  event_id TEXT NOT NULL,
  reason TEXT NOT NULL,
  at_ms INTEGER NOT NULL
) STRICT;

-- A box restored from an old copy of its database: the central's events it lost are fetched here first
-- (durably, page by page), then applied in one transaction with its own newer events renumbered after them.
CREATE TABLE sync_inbox (
  seq INTEGER PRIMARY KEY,
  epoch INTEGER NOT NULL,
  chain_hash TEXT NOT NULL,
  envelope TEXT NOT NULL
) STRICT;

-- 1 for the command that created the order, one more for each applied command: the central keeps every version.
ALTER TABLE orders ADD COLUMN version INTEGER NOT NULL DEFAULT 0;
`,
};
