import type { Queryable } from '../../db/pool.js';

export interface OrderFilter {
  venueId?: string;
  status?: string;
  deviceId?: string;
  source?: string;
  /** Venue-local dates, inclusive (each order's venue: the one asked for, else its first bucket's). */
  from?: string;
  to?: string;
  /** Instants no order of those dates can be before or after, in any zone (reports/dates.ts createdBounds). */
  createdAfter?: Date | null;
  createdBefore?: Date | null;
  /** Text in the contact, case-insensitive. */
  q?: string;
  after?: { at: string; id: string };
  limit: number;
}

/** `text` as a LIKE pattern matching itself: backslash, % and _ escaped (LIKE's default escape is backslash). */
const likeLiteral = (text: string): string => text.replace(/[\\%_]/g, (c) => `\\${c}`);

/**
 * SQL of headquarters' reads (the projections' tables; HQ never writes them). Cursor timestamps are written in
 * UTC whatever the session's TimeZone, so a date of year 9999 never prints as year 10000 (cursor.ts).
 */
export function createHqRepo(db: Queryable) {
  return {
    /**
     * The order search reads the report facts (migration 7): one row per order and venue, so a venue's orders
     * walk (tenant, venue, created) and all orders walk the first venue's rows (tenant, created); `q` may use the
     * contact's trigram index instead. The Order itself comes from `orders` for the page's rows only.
     */
    async orders(tenantId: string, f: OrderFilter) {
      const { rows } = await db.query<{
        order_id: string;
        device_id: string;
        version: number;
        data: Record<string, unknown>;
        contact: Record<string, string> | null;
        at: string;
      }>(
        `SELECT o.order_id, o.device_id, o.version, o.data, f.contact,
           (f.created_at AT TIME ZONE 'UTC')::text || '+00' AS at
         FROM order_facts f JOIN orders o ON o.tenant_id = f.tenant_id AND o.order_id = f.order_id
         WHERE f.tenant_id = $1 AND ${f.venueId === undefined ? 'f.first_venue AND $2::text IS NULL' : 'f.venue_id = $2'}
           AND ($3::text IS NULL OR f.status = $3) AND ($4::text IS NULL OR f.device_id = $4)
           AND ($5::text IS NULL OR f.source = $5)
           AND ($6::date IS NULL OR (f.local_day >= $6 AND f.created_at >= $7))
           AND ($8::date IS NULL OR (f.local_day <= $8 AND f.created_at < $9))
           ${f.q === undefined ? 'AND $10::text IS NULL' : `AND f.contact_text LIKE '%' || lower($10) || '%'`}
           AND ($11::timestamptz IS NULL OR (f.created_at, f.order_id) < ($11, $12))
         ORDER BY f.created_at DESC, f.order_id DESC LIMIT $13`,
        [
          tenantId,
          f.venueId ?? null,
          f.status ?? null,
          f.deviceId ?? null,
          f.source ?? null,
          f.from ?? null,
          f.createdAfter ?? null,
          f.to ?? null,
          f.createdBefore ?? null,
          f.q === undefined ? null : likeLiteral(f.q),
          f.after?.at ?? null,
          f.after?.id ?? '',
          f.limit + 1,
        ],
      );
      return rows;
    },
    async order(tenantId: string, orderId: string) {
      const { rows } = await db.query<{ device_id: string; version: number; data: Record<string, unknown> }>(
        'SELECT device_id, version, data FROM orders WHERE tenant_id = $1 AND order_id = $2',
        [tenantId, orderId],
      );
      return rows[0];
    },
    async orderVersions(tenantId: string, orderId: string) {
      const { rows } = await db.query<{
        device_id: string;
        seq: number;
        version: number;
        data: unknown;
        command: unknown;
        received_at: Date;
      }>(
        `SELECT device_id, seq, version, data, command, received_at FROM order_versions
         WHERE tenant_id = $1 AND order_id = $2 ORDER BY version, seq`,
        [tenantId, orderId],
      );
      return rows;
    },
    async warehouseExists(tenantId: string, warehouseId: string): Promise<boolean> {
      return (
        (await db.query('SELECT 1 FROM warehouses WHERE tenant_id = $1 AND warehouse_id = $2', [tenantId, warehouseId]))
          .rowCount === 1
      );
    },
    async balances(tenantId: string, warehouseId: string) {
      const { rows } = await db.query<{ item_id: string; unit: string; qty_micro: number }>(
        'SELECT item_id, unit, qty_micro FROM stock_balances WHERE tenant_id = $1 AND warehouse_id = $2 ORDER BY item_id, unit',
        [tenantId, warehouseId],
      );
      return rows;
    },
    async documents(
      tenantId: string,
      warehouseId: string,
      after: { at: string; id: string } | undefined,
      limit: number,
    ) {
      const { rows } = await db.query<{
        document_id: string;
        device_id: string;
        data: Record<string, unknown>;
        at: string;
      }>(
        `SELECT document_id, device_id, data, (created_at AT TIME ZONE 'UTC')::text || '+00' AS at FROM stock_documents
         WHERE tenant_id = $1 AND warehouse_id = $2 AND ($3::timestamptz IS NULL OR (created_at, document_id) < ($3, $4))
         ORDER BY created_at DESC, document_id DESC LIMIT $5`,
        [tenantId, warehouseId, after?.at ?? null, after?.id ?? '', limit + 1],
      );
      return rows;
    },
    async document(tenantId: string, documentId: string) {
      const { rows } = await db.query<{ device_id: string; data: Record<string, unknown> }>(
        'SELECT device_id, data FROM stock_documents WHERE tenant_id = $1 AND document_id = $2',
        [tenantId, documentId],
      );
      return rows[0];
    },
    /** The rows a document moved balances by, in the order of its lines. */
    async ledger(tenantId: string, documentId: string) {
      const { rows } = await db.query<{
        warehouse_id: string;
        line: number;
        item_id: string;
        unit: string;
        delta_micro: number;
      }>(
        `SELECT warehouse_id, line, item_id, unit, delta_micro FROM stock_ledger
         WHERE tenant_id = $1 AND document_id = $2 ORDER BY line, warehouse_id, item_id`,
        [tenantId, documentId],
      );
      return rows;
    },
  };
}
