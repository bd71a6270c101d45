import type { Migration } from '../migrate.js';

/**
 * Warehouse stock: documents, the immutable ledger written by them, the balance cache derived from the
 * ledger, stock locks and document number counters. `venue-box stock check` proves the cache equals the ledger.
 */
export const migration0002: Migration = {
  version: 2,
  name: 'warehouse',
  up: `
-- One row per posted document. The number is unique per warehouse and kind; the content digest makes a
-- retry with the same number and content return the stored document.
CREATE TABLE stock_documents (
  tenant_id TEXT NOT NULL,
  id TEXT NOT NULL,
  warehouse_id TEXT NOT NULL,
  kind TEXT NOT NULL CHECK (kind IN ('PZ', 'WZ', 'RW', 'MM', 'Inventory')),
  number TEXT NOT NULL,
  target_warehouse_id TEXT,
  user_id TEXT NOT NULL,
  content_sha256 TEXT NOT NULL,
  document_json TEXT NOT NULL,
  created_ms INTEGER NOT NULL,
  PRIMARY KEY (tenant_id, id),
  UNIQUE (tenant_id, warehouse_id, kind, number),
  FOREIGN KEY (tenant_id, warehouse_id) REFERENCES warehouses(tenant_id, id),
  FOREIGN KEY (tenant_id, target_warehouse_id) REFERENCES warehouses(tenant_id, id)
) STRICT;

-- The ledger: one row per document item and warehouse it changes (an MM writes two). Never updated or
-- deleted; current stock is the sum of delta_qty_micro per (tenant, warehouse, item). WITHOUT ROWID and no
-- per-item index: a 2048-item document then writes one b-tree region, not three (it is the commit's bulk).
CREATE TABLE stock_ledger (
  tenant_id TEXT NOT NULL,
  document_id TEXT NOT NULL,
  warehouse_id TEXT NOT NULL,
  line INTEGER NOT NULL,
  item_id TEXT NOT NULL,
  unit TEXT NOT NULL,
  delta_qty_micro INTEGER NOT NULL,
  created_ms INTEGER NOT NULL,
  PRIMARY KEY (tenant_id, document_id, warehouse_id, line),
  FOREIGN KEY (tenant_id, document_id) REFERENCES stock_documents(tenant_id, id)
) STRICT, WITHOUT ROWID;
CREATE TRIGGER stock_ledger_no_update BEFORE UPDATE ON stock_ledger
  BEGIN SELECT RAISE(ABORT, 'the stock ledger is append-only'); END;
CREATE TRIGGER stock_ledger_no_delete BEFORE DELETE ON stock_ledger
  BEGIN SELECT RAISE(ABORT, 'the stock ledger is append-only'); END;
CREATE TRIGGER stock_documents_no_update BEFORE UPDATE ON stock_documents
  BEGIN SELECT RAISE(ABORT, 'stock documents are immutable'); END;
CREATE TRIGGER stock_documents_no_delete BEFORE DELETE ON stock_documents
  BEGIN SELECT RAISE(ABORT, 'stock documents are immutable'); END;

-- Cache of the ledger sums, written in the same transaction as the ledger rows. The unit is the one the
-- warehouse keeps the item in (fixed by the first document that names the item there).
CREATE TABLE stock_balances (
  tenant_id TEXT NOT NULL,
  warehouse_id TEXT NOT NULL,
  item_id TEXT NOT NULL,
  unit TEXT NOT NULL,
  qty_micro INTEGER NOT NULL CHECK (qty_micro >= 0),
  PRIMARY KEY (tenant_id, warehouse_id, item_id),
  FOREIGN KEY (tenant_id, warehouse_id) REFERENCES warehouses(tenant_id, id)
) STRICT, WITHOUT ROWID;

-- Stock locks: one row per user and item, renewed by each lock call. A row past expires_ms counts for
-- nothing even before the sweep removes it.
CREATE TABLE stock_locks (
  tenant_id TEXT NOT NULL,
  warehouse_id TEXT NOT NULL,
  item_id TEXT NOT NULL,
  user_id TEXT NOT NULL,
  qty_micro INTEGER NOT NULL CHECK (qty_micro > 0),
  expires_ms INTEGER NOT NULL,
  PRIMARY KEY (tenant_id, warehouse_id, item_id, user_id),
  FOREIGN KEY (tenant_id, warehouse_id) REFERENCES warehouses(tenant_id, id)
) STRICT, WITHOUT ROWID;
CREATE INDEX stock_locks_user ON stock_locks (tenant_id, warehouse_id, user_id);
CREATE INDEX stock_locks_expiry ON stock_locks (expires_ms);

-- Server-assigned document numbers (PZ/2026/11/000001): the last sequence per warehouse, kind and month.
CREATE TABLE stock_number_counters (
  tenant_id TEXT NOT NULL,
  warehouse_id TEXT NOT NULL,
  kind TEXT NOT NULL,
  period TEXT NOT NULL,
  last_seq INTEGER NOT NULL,
  PRIMARY KEY (tenant_id, warehouse_id, kind, period)
) STRICT, WITHOUT ROWID;
`,
};
