import { AppError, invalidField, notFound } from '../../shared/errors.js';
import { newId } from '../../shared/ids.js';
import { fromMicro } from '../../shared/qty.js';
import { postDocument, type PostResult, type StoredDocument } from './documents.js';
import { checkLedger, type LedgerCheck, rebuildBalances } from './ledger-check.js';
import { lockItems, lockPackets, releaseCall } from './stock-lock-service.js';
import type { StockDocumentBody, WarehouseChangedBody } from '../../shared/sync-messages.js';
import type { Outbox } from '../sync/up/outbox.js';
import type { Warehouse, WarehouseRepo } from './repo.js';
import { reinstateDocument, reinstateWarehouse } from './reinstate.js';
import type { Actor, DocumentInput, LockLine, PacketInput, WarehouseBody } from './schemas.js';

export interface WarehouseDeps {
  repo: WarehouseRepo;
  /** Warehouses and documents go to the central through the outbox (docs/sync.md "Sync to the central node"). */
  outbox: Outbox;
  now(): number;
  /** How long a lock holds stock (config warehouse.lockTtlMinutes). */
  lockTtlMs: number;
  newId?: () => string;
}

export interface StockItem {
  id: string;
  /** The unit the warehouse keeps the item in; null for an item it never held. */
  unit: string | null;
  qty: number;
  locked: number;
  available: number;
}

/** Warehouse use cases: warehouses, stock documents, current stock, locks; each call one transaction. */
export function createWarehouseService(deps: WarehouseDeps) {
  const { repo } = deps;
  const docDeps = { repo, outbox: deps.outbox, now: deps.now, newId: deps.newId ?? newId };

  const requireWarehouse = (tenantId: string, id: string): Warehouse => {
    const w = repo.warehouse(tenantId, id);
    if (!w) throw notFound('warehouse');
    return w;
  };

  return {
    /**
     * Creates a warehouse. The same id again with the same name is a safe retry (created false, 200);
     * the same id with another name is a 409 conflict.
     */
    createWarehouse(actor: Actor, body: WarehouseBody): { created: boolean; warehouse: Warehouse } {
      return repo.transaction(() => {
        const existing = repo.warehouse(actor.tenantId, body.id);
        if (existing) {
          if (existing.name !== body.name) {
            throw AppError.of('conflict', `warehouse ${body.id} already exists with another name`, [body.id]);
          }
          return { created: false, warehouse: existing };
        }
        const warehouse = { id: body.id, name: body.name };
        repo.insertWarehouse(actor.tenantId, warehouse);
        deps.outbox.append(actor.tenantId, 'warehouse.changed', warehouse.id, warehouse, deps.now());
        return { created: true, warehouse };
      });
    },

    updateWarehouse(actor: Actor, id: string, body: WarehouseBody): Warehouse {
      if (body.id !== id) throw invalidField('/id', 'id in the body differs from the warehouse id in the path');
      return repo.transaction(() => {
        if (!repo.renameWarehouse(actor.tenantId, body)) throw notFound('warehouse');
        deps.outbox.append(actor.tenantId, 'warehouse.changed', id, { id, name: body.name }, deps.now());
        return { id, name: body.name };
      });
    },

    getWarehouse: (actor: Actor, id: string): Warehouse => requireWarehouse(actor.tenantId, id),

    postDocument: (actor: Actor, warehouseId: string, doc: DocumentInput): PostResult =>
      postDocument(docDeps, actor, warehouseId, doc),

    /** Current stock of the named items, from one snapshot; an item the warehouse never held is all zeros. */
    stock(actor: Actor, warehouseId: string, itemIds: string[]): { warehouse: string; items: StockItem[] } {
      return repo.read(() => {
        requireWarehouse(actor.tenantId, warehouseId);
        const now = deps.now();
        const items = itemIds.map((id) => {
          const s = repo.itemState(actor.tenantId, warehouseId, id, actor.userId, now);
          return {
            id,
            unit: s.unit,
            qty: fromMicro(s.qtyMicro),
            locked: fromMicro(s.lockedMicro),
            available: fromMicro(s.qtyMicro - s.lockedMicro),
          };
        });
        return { warehouse: warehouseId, items };
      });
    },

    lockItems: (actor: Actor, warehouseId: string, packets: number, lines: LockLine[]) =>
      lockItems(deps, actor, warehouseId, packets, lines),
    lockPackets: (actor: Actor, warehouseId: string, packets: PacketInput[]) =>
      lockPackets(deps, actor, warehouseId, packets),
    releaseLocks: (actor: Actor, warehouseId: string, itemIds: string[] | undefined) =>
      releaseCall(deps, actor, warehouseId, itemIds),

    /** Deletes locks past their expiry (they already count for nothing); returns how many. */
    sweepExpiredLocks: (): number => repo.transaction(() => repo.deleteExpiredLocks(deps.now())),

    /**
     * Once, on the first start with sync: every document the box held before, oldest first, with its ledger rows,
     * and before each the warehouses it names (so the central's stock equals the box's). Returns how many.
     */
    backfillSync(): number {
      let count = 0;
      const named = new Set<string>();
      for (const d of repo.allDocuments()) {
        const document = JSON.parse(d.documentJson) as StoredDocument;
        for (const wid of [document.warehouse, document.targetWarehouse]) {
          if (wid === undefined || named.has(`${d.tenantId}/${wid}`)) continue;
          named.add(`${d.tenantId}/${wid}`);
          const w = repo.warehouse(d.tenantId, wid)!;
          deps.outbox.append(d.tenantId, 'warehouse.changed', wid, w, deps.now());
        }
        deps.outbox.append(
          d.tenantId,
          'stock.document',
          document.id,
          {
            document,
            ledger: d.ledger.map((l) => [l.warehouseId, l.line, l.itemId, l.unit, l.deltaMicro]),
          },
          deps.now(),
        );
        count++;
      }
      return count;
    },

    /** Put back from the central's copy (src/modules/warehouse/reinstate.ts). */
    reinstateWarehouse: (tenantId: string, body: WarehouseChangedBody): void =>
      reinstateWarehouse(repo, tenantId, body),
    reinstateDocument: (tenantId: string, body: StockDocumentBody): void => reinstateDocument(repo, tenantId, body),

    checkLedger: (): LedgerCheck => checkLedger(repo),
    rebuildBalances: (): LedgerCheck => rebuildBalances(repo),
  };
}
export type WarehouseService = ReturnType<typeof createWarehouseService>;
