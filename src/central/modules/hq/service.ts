import { notFound } from '../../../shared/errors.js';
import { fromMicro } from '../../../shared/qty.js';
import type { Pool } from '../../db/pool.js';
import type { DeviceService } from '../devices/service.js';
import { encodeCursor } from './cursor.js';
import { createHqRepo, type OrderFilter } from './repo.js';

export interface Page<T> {
  items: T[];
  next: string | null;
}

/** Headquarters' read API over the projections: orders with every version, stock, documents, devices. */
export function createHqService(pool: Pool, devices: DeviceService) {
  const repo = createHqRepo(pool);

  /** `limit + 1` rows were asked for: the extra one only says that a next page exists. */
  function page<R extends { at: string }, T>(
    rows: R[],
    limit: number,
    idOf: (r: R) => string,
    view: (r: R) => T,
  ): Page<T> {
    const items = rows.slice(0, limit);
    const last = items[items.length - 1];
    return { items: items.map(view), next: rows.length > limit && last ? encodeCursor(last.at, idOf(last)) : null };
  }

  return {
    async orders(tenantId: string, filter: OrderFilter) {
      const rows = await repo.orders(tenantId, filter);
      return page(
        rows,
        filter.limit,
        (r) => r.order_id,
        (r) => ({ ...r.data, deviceId: r.device_id, version: r.version, contact: r.contact }),
      );
    },
    async order(tenantId: string, orderId: string) {
      const row = await repo.order(tenantId, orderId);
      if (!row) throw notFound('order');
      return { ...row.data, deviceId: row.device_id, version: row.version };
    },
    async orderVersions(tenantId: string, orderId: string) {
      const rows = await repo.orderVersions(tenantId, orderId);
      if (rows.length === 0) throw notFound('order');
      return rows.map((r) => ({
        version: r.version,
        deviceId: r.device_id,
        seq: r.seq,
        receivedAt: r.received_at.toISOString(),
        command: r.command,
        order: r.data,
      }));
    },
    /**
     * The box's stock shape; locks stay on the box, so nothing is locked here and all of it is available. A
     * balance outside the safe range (only one written before migration 2 can be) reads as null, never a 500.
     */
    async stock(tenantId: string, warehouseId: string) {
      if (!(await repo.warehouseExists(tenantId, warehouseId))) throw notFound('warehouse');
      const items = (await repo.balances(tenantId, warehouseId)).map((r) => {
        const qty = Number.isSafeInteger(r.qty_micro) ? fromMicro(r.qty_micro) : null;
        return { id: r.item_id, unit: r.unit, qty, locked: 0, available: qty };
      });
      return { warehouse: warehouseId, items };
    },
    async documents(
      tenantId: string,
      warehouseId: string,
      after: { at: string; id: string } | undefined,
      limit: number,
    ) {
      if (!(await repo.warehouseExists(tenantId, warehouseId))) throw notFound('warehouse');
      const rows = await repo.documents(tenantId, warehouseId, after, limit);
      return page(
        rows,
        limit,
        (r) => r.document_id,
        (r) => ({ ...r.data, deviceId: r.device_id }),
      );
    },
    /** A document as the list gives it, with the ledger rows it booked (deltas in the unit, as the box shows them). */
    async document(tenantId: string, documentId: string) {
      const row = await repo.document(tenantId, documentId);
      if (!row) throw notFound('stock document');
      const ledger = (await repo.ledger(tenantId, documentId)).map((r) => ({
        warehouseId: r.warehouse_id,
        line: r.line,
        itemId: r.item_id,
        unit: r.unit,
        delta: fromMicro(r.delta_micro),
      }));
      return { ...row.data, deviceId: row.device_id, ledger };
    },
    async devices(tenantId: string) {
      return (await devices.list(tenantId)).map(({ tenant: _tenant, ...d }) => d);
    },
  };
}

export type HqService = ReturnType<typeof createHqService>;
