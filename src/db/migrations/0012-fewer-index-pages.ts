import type { Migration } from '../migrate.js';

/**
 * Fewer and smaller index pages for every command to write (docs/performance.md "What a `new` writes"):
 *
 * - The command log and the sync outbox are rebuilt without the UNIQUE constraints on `correlation_id` and
 *   `event_id` (each an index of its own; the box draws both ids itself, UUIDv7, and nothing looks a row up by
 *   them), and the outbox without AUTOINCREMENT, whose `sqlite_sequence` row was rewritten at every append. An
 *   outbox number is still never reused: the next is the newest row's plus one, and the newest number never
 *   goes down (the retention keeps the newest row, which carries the chain; a restore renumbers upwards). The one correlation id that must stay unique is an order's from the central,
 *   whose `new` takes the order's id as its correlation id (docs/sync.md "Orders created at the central"): an
 *   entry delivered again while its `new` is queued, or after it was refused, is skipped by that constraint. A
 *   partial index keeps it for those rows alone; no other command writes it.
 * - A stream's events are found by `(user_id, seq)` instead of the key `(tenant_id, user_id, seq)`: the tenant's
 *   UUID in every entry made the entries nearly twice as large (about 90 bytes against 50), so its leaves split
 *   more often (three leaves and their parent rewritten each time). Queries still name the tenant; a stream's numbers are given by the event store
 *   (the next after its newest), so nothing needs the key to be unique. Rows keep their rowids (the retention
 *   reads them in that order).
 * - The claim codes of open orders are indexed by the code alone, without the tenant's UUID (entries of about
 *   12 bytes against 50, so a fraction of the splits); the lookup still names the tenant and reads it from the order's row.
 *
 * Rows, numbers and the pending index stay as they were.
 */
export const migration0012: Migration = {
  version: 12,
  name: 'fewer-index-pages',
  up: `
CREATE TABLE order_commands_12 (
  seq INTEGER PRIMARY KEY,
  correlation_id TEXT NOT NULL,
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
INSERT INTO order_commands_12 (seq, correlation_id, tenant_id, user_id, staff, order_id, kind, body_json, confirmed_ms,
    processed_ms, outcome)
  SELECT seq, correlation_id, tenant_id, user_id, staff, order_id, kind, body_json, confirmed_ms, processed_ms, outcome
    FROM order_commands ORDER BY seq;
DROP TABLE order_commands;
ALTER TABLE order_commands_12 RENAME TO order_commands;
CREATE INDEX order_commands_pending ON order_commands (seq) WHERE processed_ms IS NULL;
CREATE UNIQUE INDEX order_commands_central_new ON order_commands (correlation_id) WHERE correlation_id = order_id;

CREATE TABLE sync_outbox_12 (
  seq INTEGER PRIMARY KEY,
  event_id TEXT NOT NULL,
  tenant_id TEXT NOT NULL,
  kind TEXT NOT NULL,
  aggregate_id TEXT NOT NULL,
  envelope TEXT NOT NULL,
  chain_hash TEXT NOT NULL,
  created_ms INTEGER NOT NULL
) STRICT;
INSERT INTO sync_outbox_12 (seq, event_id, tenant_id, kind, aggregate_id, envelope, chain_hash, created_ms)
  SELECT seq, event_id, tenant_id, kind, aggregate_id, envelope, chain_hash, created_ms FROM sync_outbox ORDER BY seq;
DROP TABLE sync_outbox;
ALTER TABLE sync_outbox_12 RENAME TO sync_outbox;

CREATE TABLE user_events_12 (
  tenant_id TEXT NOT NULL,
  user_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  type TEXT NOT NULL,
  payload_json TEXT NOT NULL,
  created_ms INTEGER NOT NULL
) STRICT;
INSERT INTO user_events_12 (rowid, tenant_id, user_id, seq, type, payload_json, created_ms)
  SELECT rowid, tenant_id, user_id, seq, type, payload_json, created_ms FROM user_events ORDER BY rowid;
DROP TABLE user_events;
ALTER TABLE user_events_12 RENAME TO user_events;
CREATE INDEX user_events_stream ON user_events (user_id, seq);

DROP INDEX orders_open_claim;
CREATE INDEX orders_open_claim ON orders (claim_code) WHERE closed = 0;
`,
};
