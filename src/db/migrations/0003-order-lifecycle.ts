import type { Migration } from '../migrate.js';

/**
 * The order lifecycle: kitchen rounds, durable print jobs, sold-out products, and the indexes the staff
 * views need. Additive only: existing rows keep their meaning (an order that never was submitted has 0 rounds,
 * a line that never was ordered has no round).
 */
export const migration0003: Migration = {
  version: 3,
  name: 'order-lifecycle',
  up: `
-- Submits so far: round n of an order is the n-th submit, each printed on its own kitchen ticket.
ALTER TABLE orders ADD COLUMN rounds INTEGER NOT NULL DEFAULT 0;
-- The round a line was ordered in; NULL while the line is NEW.
ALTER TABLE order_lines ADD COLUMN round INTEGER;

-- Staff list: newest first, keyset-paged on (created_ms, id); venue filter through the buckets.
CREATE INDEX orders_newest ON orders (tenant_id, created_ms DESC, id DESC);
CREATE INDEX order_buckets_venue ON order_buckets (tenant_id, venue_id, order_id);

-- Tickets to print, written in the same transaction as the command that causes them (submit, cancel, a staff
-- reprint), so a crash can delay a ticket but never lose it. One row per ticket per printer: routing is decided
-- at write time from the configuration (src/modules/printing/printers.ts) and recorded in printer, NULL with
-- state 'unrouted' when the venue has no printer for it (kept, visible to staff). The spooler prints a printer's
-- 'queued' rows in rowid order and marks one 'printed' only after its bytes are drained to the port.
-- States: queued -> printed | expired (a kitchen ticket too old to print by itself) | failed (cannot be encoded).
CREATE TABLE print_jobs (
  tenant_id TEXT NOT NULL,
  id TEXT NOT NULL,
  venue_id TEXT NOT NULL,
  order_id TEXT NOT NULL,
  kind TEXT NOT NULL CHECK (kind IN ('kitchen', 'claim', 'cancel')),
  round INTEGER NOT NULL,
  printer TEXT,
  payload_json TEXT NOT NULL,
  state TEXT NOT NULL CHECK (state IN ('queued', 'printed', 'expired', 'failed', 'unrouted')),
  -- A staff reprint: the job it copies; the ticket then says COPY / KOPIA.
  copy_of TEXT,
  attempts INTEGER NOT NULL DEFAULT 0,
  last_error TEXT,
  -- The printer that printed it: the printer itself, or its backup while the printer was down.
  printed_on TEXT,
  created_ms INTEGER NOT NULL,
  -- When it was printed, expired or failed.
  done_ms INTEGER,
  PRIMARY KEY (tenant_id, id),
  FOREIGN KEY (tenant_id, order_id) REFERENCES orders(tenant_id, id),
  CHECK ((printer IS NULL) = (state = 'unrouted'))
) STRICT;
-- A printer's queue, oldest first (rowid order: the index ends with the rowid).
CREATE INDEX print_jobs_queue ON print_jobs (tenant_id, printer) WHERE state = 'queued';
CREATE INDEX print_jobs_order ON print_jobs (tenant_id, order_id);
CREATE INDEX print_jobs_newest ON print_jobs (tenant_id, created_ms DESC);

-- Sold-out products, per venue (venues sharing a menu sell out separately).
CREATE TABLE product_locks (
  tenant_id TEXT NOT NULL,
  venue_id TEXT NOT NULL,
  product_id TEXT NOT NULL,
  reason TEXT NOT NULL,
  since_ms INTEGER NOT NULL,
  PRIMARY KEY (tenant_id, venue_id, product_id)
) STRICT;
`,
};
