import { type Db, inTransaction } from '../../db/open.js';
import type { DocumentKind } from './schemas.js';

export interface Warehouse {
  id: string;
  name: string;
}

/** What one warehouse holds of one item right now, as seen by one user. */
export interface ItemState {
  /** The unit the warehouse keeps the item in; null for an item it never held. */
  unit: string | null;
  qtyMicro: number;
  /** Live (unexpired) locks of every user. */
  lockedMicro: number;
  /** Live lock of the asking user (part of lockedMicro). */
  ownMicro: number;
}

export interface LockRow {
  userId: string;
  qtyMicro: number;
  expiresMs: number;
}

export interface StoredDocumentRow {
  contentSha256: string;
  documentJson: string;
}

export interface NewDocumentRow {
  tenantId: string;
  id: string;
  warehouseId: string;
  kind: DocumentKind;
  number: string;
  targetWarehouseId: string | null;
  userId: string;
  contentSha256: string;
  documentJson: string;
  createdMs: number;
}

export interface LedgerRow {
  warehouseId: string;
  line: number;
  itemId: string;
  unit: string;
  deltaMicro: number;
}

export interface BalanceRow {
  tenantId: string;
  warehouseId: string;
  itemId: string;
  unit: string;
  qtyMicro: number;
}

/** SQL of the warehouse module: warehouses, documents, the ledger, the balance cache, locks, numbers. */
export function createWarehouseRepo(db: Db) {
  const tx = inTransaction(db);
  const s = {
    warehouse: db.prepare<[string, string], Warehouse>(
      'SELECT id, name FROM warehouses WHERE tenant_id = ? AND id = ?',
    ),
    insertWarehouse: db.prepare('INSERT INTO warehouses (tenant_id, id, name) VALUES (?, ?, ?)'),
    renameWarehouse: db.prepare('UPDATE warehouses SET name = ? WHERE tenant_id = ? AND id = ?'),
    itemState: db.prepare<
      { t: string; w: string; i: string; u: string; now: number },
      { unit: string | null; qty_micro: number; locked_micro: number; own_micro: number }
    >(
      `SELECT b.unit AS unit, COALESCE(b.qty_micro, 0) AS qty_micro,
         (SELECT COALESCE(SUM(l.qty_micro), 0) FROM stock_locks l
           WHERE l.tenant_id = @t AND l.warehouse_id = @w AND l.item_id = @i AND l.expires_ms > @now) AS locked_micro,
         (SELECT COALESCE(SUM(l.qty_micro), 0) FROM stock_locks l
           WHERE l.tenant_id = @t AND l.warehouse_id = @w AND l.item_id = @i AND l.user_id = @u
             AND l.expires_ms > @now) AS own_micro
       FROM (SELECT 1) LEFT JOIN stock_balances b
         ON b.tenant_id = @t AND b.warehouse_id = @w AND b.item_id = @i`,
    ),
    upsertBalance: db.prepare(
      `INSERT INTO stock_balances (tenant_id, warehouse_id, item_id, unit, qty_micro) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (tenant_id, warehouse_id, item_id) DO UPDATE SET qty_micro = excluded.qty_micro`,
    ),
    document: db.prepare<[string, string, string, string], { content_sha256: string; document_json: string }>(
      `SELECT content_sha256, document_json FROM stock_documents
       WHERE tenant_id = ? AND warehouse_id = ? AND kind = ? AND number = ?`,
    ),
    allDocuments: db.prepare<[], { tenant_id: string; id: string; document_json: string }>(
      'SELECT tenant_id, id, document_json FROM stock_documents ORDER BY created_ms, rowid',
    ),
    ledgerOf: db.prepare<
      [string, string],
      { warehouse_id: string; line: number; item_id: string; unit: string; delta_qty_micro: number }
    >(
      'SELECT warehouse_id, line, item_id, unit, delta_qty_micro FROM stock_ledger WHERE tenant_id = ? AND document_id = ?',
    ),
    documentById: db.prepare<[string, string], { one: number }>(
      'SELECT 1 AS one FROM stock_documents WHERE tenant_id = ? AND id = ?',
    ),
    upsertWarehouse: db.prepare(
      'INSERT INTO warehouses (tenant_id, id, name) VALUES (?, ?, ?) ON CONFLICT (tenant_id, id) DO UPDATE SET name = excluded.name',
    ),
    insertDocument: db.prepare(
      `INSERT INTO stock_documents (tenant_id, id, warehouse_id, kind, number, target_warehouse_id, user_id,
         content_sha256, document_json, created_ms)
       VALUES (@tenantId, @id, @warehouseId, @kind, @number, @targetWarehouseId, @userId, @contentSha256,
         @documentJson, @createdMs)`,
    ),
    insertLedger: db.prepare(
      `INSERT INTO stock_ledger (tenant_id, document_id, warehouse_id, line, item_id, unit, delta_qty_micro, created_ms)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    nextNumber: db.prepare<[string, string, string, string], { last_seq: number }>(
      `INSERT INTO stock_number_counters (tenant_id, warehouse_id, kind, period, last_seq) VALUES (?, ?, ?, ?, 1)
       ON CONFLICT (tenant_id, warehouse_id, kind, period) DO UPDATE SET last_seq = last_seq + 1
       RETURNING last_seq`,
    ),
    liveLocks: db.prepare<[string, string, string, number], { user_id: string; qty_micro: number; expires_ms: number }>(
      `SELECT user_id, qty_micro, expires_ms FROM stock_locks
       WHERE tenant_id = ? AND warehouse_id = ? AND item_id = ? AND expires_ms > ?`,
    ),
    lock: db.prepare<[string, string, string, string], { qty_micro: number; expires_ms: number }>(
      'SELECT qty_micro, expires_ms FROM stock_locks WHERE tenant_id = ? AND warehouse_id = ? AND item_id = ? AND user_id = ?',
    ),
    setLock: db.prepare(
      `INSERT INTO stock_locks (tenant_id, warehouse_id, item_id, user_id, qty_micro, expires_ms) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (tenant_id, warehouse_id, item_id, user_id)
       DO UPDATE SET qty_micro = excluded.qty_micro, expires_ms = excluded.expires_ms`,
    ),
    deleteLock: db.prepare(
      'DELETE FROM stock_locks WHERE tenant_id = ? AND warehouse_id = ? AND item_id = ? AND user_id = ?',
    ),
    userLockedItems: db.prepare<[string, string, string], { item_id: string }>(
      'SELECT item_id FROM stock_locks WHERE tenant_id = ? AND warehouse_id = ? AND user_id = ? ORDER BY item_id',
    ),
    deleteExpiredLocks: db.prepare('DELETE FROM stock_locks WHERE expires_ms <= ?'),
    ledgerSums: db.prepare<
      [],
      {
        tenant_id: string;
        warehouse_id: string;
        item_id: string;
        unit: string;
        units: number;
        qty_micro: number;
      }
    >(
      `SELECT tenant_id, warehouse_id, item_id, MIN(unit) AS unit, COUNT(DISTINCT unit) AS units,
         SUM(delta_qty_micro) AS qty_micro
       FROM stock_ledger GROUP BY tenant_id, warehouse_id, item_id`,
    ),
    balances: db.prepare<
      [],
      { tenant_id: string; warehouse_id: string; item_id: string; unit: string; qty_micro: number }
    >('SELECT tenant_id, warehouse_id, item_id, unit, qty_micro FROM stock_balances'),
    putBalance: db.prepare(
      `INSERT INTO stock_balances (tenant_id, warehouse_id, item_id, unit, qty_micro) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (tenant_id, warehouse_id, item_id) DO UPDATE SET unit = excluded.unit, qty_micro = excluded.qty_micro`,
    ),
    deleteBalance: db.prepare('DELETE FROM stock_balances WHERE tenant_id = ? AND warehouse_id = ? AND item_id = ?'),
  };

  return {
    warehouse: (tenantId: string, id: string): Warehouse | undefined => s.warehouse.get(tenantId, id),
    insertWarehouse: (tenantId: string, w: Warehouse) => s.insertWarehouse.run(tenantId, w.id, w.name),
    renameWarehouse: (tenantId: string, w: Warehouse): boolean =>
      s.renameWarehouse.run(w.name, tenantId, w.id).changes === 1,

    itemState(tenantId: string, warehouseId: string, itemId: string, userId: string, nowMs: number): ItemState {
      const r = s.itemState.get({ t: tenantId, w: warehouseId, i: itemId, u: userId, now: nowMs })!;
      return { unit: r.unit, qtyMicro: r.qty_micro, lockedMicro: r.locked_micro, ownMicro: r.own_micro };
    },
    /** Writes the cached balance of an item; the unit is only set when the row is first created. */
    setBalance: (tenantId: string, warehouseId: string, itemId: string, unit: string, qtyMicro: number) =>
      s.upsertBalance.run(tenantId, warehouseId, itemId, unit, qtyMicro),

    document(tenantId: string, warehouseId: string, kind: DocumentKind, number: string): StoredDocumentRow | undefined {
      const r = s.document.get(tenantId, warehouseId, kind, number);
      return r ? { contentSha256: r.content_sha256, documentJson: r.document_json } : undefined;
    },
    /** Every document of every tenant, oldest first, with its ledger rows (the one-time sync backfill). */
    *allDocuments(): Generator<{ tenantId: string; documentJson: string; ledger: LedgerRow[] }> {
      for (const d of s.allDocuments.all()) {
        const ledger = s.ledgerOf.all(d.tenant_id, d.id).map((l) => ({
          warehouseId: l.warehouse_id,
          line: l.line,
          itemId: l.item_id,
          unit: l.unit,
          deltaMicro: l.delta_qty_micro,
        }));
        yield { tenantId: d.tenant_id, documentJson: d.document_json, ledger };
      }
    },
    hasDocument: (tenantId: string, id: string): boolean => s.documentById.get(tenantId, id) !== undefined,
    upsertWarehouse: (tenantId: string, w: Warehouse) => s.upsertWarehouse.run(tenantId, w.id, w.name),
    insertDocument: (d: NewDocumentRow) => s.insertDocument.run(d),
    insertLedger(tenantId: string, documentId: string, createdMs: number, rows: LedgerRow[]): void {
      for (const r of rows) {
        s.insertLedger.run(tenantId, documentId, r.warehouseId, r.line, r.itemId, r.unit, r.deltaMicro, createdMs);
      }
    },
    /** The next sequence number of a warehouse, kind and period (1 for the first). */
    nextNumber: (tenantId: string, warehouseId: string, kind: DocumentKind, period: string): number =>
      s.nextNumber.get(tenantId, warehouseId, kind, period)!.last_seq,

    liveLocks: (tenantId: string, warehouseId: string, itemId: string, nowMs: number): LockRow[] =>
      s.liveLocks.all(tenantId, warehouseId, itemId, nowMs).map((r) => ({
        userId: r.user_id,
        qtyMicro: r.qty_micro,
        expiresMs: r.expires_ms,
      })),
    lock(tenantId: string, warehouseId: string, itemId: string, userId: string): Omit<LockRow, 'userId'> | undefined {
      const r = s.lock.get(tenantId, warehouseId, itemId, userId);
      return r ? { qtyMicro: r.qty_micro, expiresMs: r.expires_ms } : undefined;
    },
    /** Sets a user's lock on an item; a quantity of zero removes it. */
    setLock(
      tenantId: string,
      warehouseId: string,
      itemId: string,
      userId: string,
      qtyMicro: number,
      expiresMs: number,
    ) {
      if (qtyMicro > 0) s.setLock.run(tenantId, warehouseId, itemId, userId, qtyMicro, expiresMs);
      else s.deleteLock.run(tenantId, warehouseId, itemId, userId);
    },
    userLockedItems: (tenantId: string, warehouseId: string, userId: string): string[] =>
      s.userLockedItems.all(tenantId, warehouseId, userId).map((r) => r.item_id),
    deleteExpiredLocks: (nowMs: number): number => s.deleteExpiredLocks.run(nowMs).changes,

    /** Ledger sums per item; `units` counts the distinct units of the item's rows (1, unless something is wrong). */
    ledgerSums: (): (BalanceRow & { units: number })[] =>
      s.ledgerSums.all().map((r) => ({
        tenantId: r.tenant_id,
        warehouseId: r.warehouse_id,
        itemId: r.item_id,
        unit: r.unit,
        units: r.units,
        qtyMicro: r.qty_micro,
      })),
    balances: (): BalanceRow[] =>
      s.balances.all().map((r) => ({
        tenantId: r.tenant_id,
        warehouseId: r.warehouse_id,
        itemId: r.item_id,
        unit: r.unit,
        qtyMicro: r.qty_micro,
      })),
    putBalance: (b: BalanceRow) => s.putBalance.run(b.tenantId, b.warehouseId, b.itemId, b.unit, b.qtyMicro),
    deleteBalance: (tenantId: string, warehouseId: string, itemId: string) =>
      s.deleteBalance.run(tenantId, warehouseId, itemId),

    /** A write transaction (BEGIN IMMEDIATE); `fn` must not await. */
    transaction: <T>(fn: () => T): T => tx.immediate(fn),
    /** A read transaction: one consistent snapshot for many statements. */
    read: <T>(fn: () => T): T => tx.deferred(fn),
  };
}
export type WarehouseRepo = ReturnType<typeof createWarehouseRepo>;
