import type { StockDocumentBody, WarehouseChangedBody } from '../../shared/sync-messages.js';
import { contentDigest } from './numbering.js';
import type { WarehouseRepo } from './repo.js';
import type { DocumentInput, DocumentKind } from './schemas.js';
import type { StoredDocument } from './documents.js';

/**
 * Puts a warehouse or a stock document back from the central's copy (a box restored from an old copy of its
 * database). Documents are immutable: one the box has already is left alone; a new one books its ledger rows
 * and moves the balances by them. Call inside the reconcile's transaction; nothing goes to the outbox.
 */
export function reinstateWarehouse(repo: WarehouseRepo, tenantId: string, body: WarehouseChangedBody): void {
  repo.upsertWarehouse(tenantId, body);
}

export function reinstateDocument(repo: WarehouseRepo, tenantId: string, body: StockDocumentBody): void {
  const doc = body.document as unknown as StoredDocument;
  if (repo.hasDocument(tenantId, doc.id)) return;
  const createdMs = Date.parse(doc.created);
  // The digest a retry of this number is compared with (docs/warehouse.md "The warehouse", Rules: same number, same content).
  const input = {
    kind: doc.kind,
    number: doc.number,
    items: doc.items,
    unlockItems: doc.unlockItems,
    extra: doc.extra,
    ...(doc.targetWarehouse !== undefined ? { targetWarehouse: doc.targetWarehouse } : {}),
  } as unknown as DocumentInput;
  repo.insertDocument({
    tenantId,
    id: doc.id,
    warehouseId: doc.warehouse,
    kind: doc.kind as DocumentKind,
    number: doc.number,
    targetWarehouseId: doc.targetWarehouse ?? null,
    userId: doc.user,
    contentSha256: contentDigest(input),
    documentJson: JSON.stringify(doc),
    createdMs,
  });
  const ledger = body.ledger.map(([warehouseId, line, itemId, unit, deltaMicro]) => ({
    warehouseId,
    line,
    itemId,
    unit,
    deltaMicro,
  }));
  repo.insertLedger(tenantId, doc.id, createdMs, ledger);
  for (const l of ledger) {
    const before = repo.itemState(tenantId, l.warehouseId, l.itemId, '', createdMs);
    repo.setBalance(tenantId, l.warehouseId, l.itemId, before.unit ?? l.unit, before.qtyMicro + l.deltaMicro);
  }
}
