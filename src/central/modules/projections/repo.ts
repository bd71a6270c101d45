import type { LedgerTuple } from '../../../shared/sync-messages.js';
import type { Queryable } from '../../db/pool.js';

/** An order.changed event checked and waiting for its batch's one upsert (`projectOrders`). */
export interface PendingOrder {
  id: string;
  seq: number;
  version: number;
  status: string;
  venueIds: string[];
  createdAt: Date;
  /** For the report facts (facts.ts): the command's confirmedAt and the event's detail.contact. */
  confirmedAt: string;
  contact: Record<string, string> | null;
}

export interface Source {
  tenantId: string;
  deviceId: string;
  seq: number;
}

/** SQL of the projections: orders and their versions, stock documents, ledger and balances, sold out. */
export function createProjectionRepo(db: Queryable) {
  return {
    async countVenues(tenantId: string, ids: string[]): Promise<number> {
      const { rows } = await db.query<{ n: number }>({
        name: 'project-count-venues',
        text: 'SELECT count(*) AS n FROM venues WHERE tenant_id = $1 AND venue_id = ANY($2)',
        values: [tenantId, ids],
      });
      return rows[0]!.n;
    },
    async countWarehouses(tenantId: string, ids: string[]): Promise<number> {
      const { rows } = await db.query<{ n: number }>(
        'SELECT count(*) AS n FROM warehouses WHERE tenant_id = $1 AND warehouse_id = ANY($2)',
        [tenantId, ids],
      );
      return rows[0]!.n;
    },
    /**
     * The newest event of an order wins (by seq of its device): a replay of an older one changes nothing. Its
     * created_at stays that of the first event projected: the box's time moved to the central's clock can differ
     * between versions sent before and after the box's clock was set (docs/sync.md "Clocks"). Only
     * the device that first sent the order may change it; says whether the row was written, and names the owner
     * when it is another device.
     */
    async upsertOrder(
      s: Source,
      o: { id: string; version: number; status: string; venueIds: string[]; createdAt: Date; json: string },
    ): Promise<{ written: boolean; owner?: string }> {
      const written = await db.query(
        `INSERT INTO orders (tenant_id, order_id, device_id, version, last_seq, status, venue_ids, created_at, data)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
         ON CONFLICT (tenant_id, order_id) DO UPDATE SET version = EXCLUDED.version,
           last_seq = EXCLUDED.last_seq, status = EXCLUDED.status, venue_ids = EXCLUDED.venue_ids,
           data = EXCLUDED.data, updated_at = now()
         WHERE orders.device_id = EXCLUDED.device_id AND orders.last_seq < EXCLUDED.last_seq`,
        [s.tenantId, o.id, s.deviceId, o.version, s.seq, o.status, o.venueIds, o.createdAt, o.json],
      );
      if (written.rowCount === 1) return { written: true };
      // Not written: a replay of this device's older event, or another device's order (the row it conflicted
      // with is committed or ours, so this read sees it).
      const { rows } = await db.query<{ device_id: string }>(
        'SELECT device_id FROM orders WHERE tenant_id = $1 AND order_id = $2',
        [s.tenantId, o.id],
      );
      const owner = rows[0]?.device_id;
      return { written: false, owner: owner !== undefined && owner !== s.deviceId ? owner : undefined };
    },
    /**
     * A batch's order events at once (the ingest's fast path): every version in one insert, then each order's
     * newest event of the batch in one upsert, under the same rules as `upsertOrder`. Returns the ids of the orders
     * written, and of those another device owns (the caller then takes the batch event by event, so only those
     * are set aside).
     */
    async projectOrders(
      tenantId: string,
      deviceId: string,
      events: PendingOrder[],
    ): Promise<{ written: Set<string>; foreign: string[] }> {
      // One statement, each event's JSON parsed into jsonb once for its version and, when it is its order's newest
      // of the batch, for the orders row. The JSON is read from the envelope the ingest has just stored, not sent
      // again: sending it was half the bytes the central wrote to PostgreSQL, and writing them was its largest cost
      // (docs/performance.md "Draining a busy day at 5,000 events/s"). An envelope not found there (none stored
      // this hour) gives a null, which the NOT NULL columns refuse: the caller then goes event by event, with the
      // JSON the central parsed. `received_at` this hour keeps the lookup to the newest partitions.
      const newest = [...new Map(events.map((e) => [e.id, e])).values()];
      const written = await db.query<{ order_id: string }>({
        name: 'project-orders',
        text: `WITH input AS MATERIALIZED (
           SELECT o, v, s, st, vi, c, (SELECT e.envelope::jsonb -> 'body' FROM sync_events e
             WHERE e.tenant_id = $1 AND e.device_id = $2 AND e.seq = t.s AND e.received_at > now() - interval '1 hour') AS b
           FROM unnest($3::text[], $4::int[], $5::bigint[], $6::text[], $7::text[], $8::timestamptz[]) AS t(o, v, s, st, vi, c)
         ), versions AS (
           INSERT INTO order_versions (tenant_id, order_id, device_id, seq, version, data, command)
           SELECT $1, o, $2, s, v, b -> 'order', b -> 'command' FROM input
           ON CONFLICT DO NOTHING
         )
         INSERT INTO orders (tenant_id, order_id, device_id, version, last_seq, status, venue_ids, created_at, data)
         SELECT $1, o, $2, v, s, st, ARRAY(SELECT jsonb_array_elements_text(vi::jsonb)), c, b -> 'order'
         FROM input WHERE s = ANY($9::bigint[])
         ON CONFLICT (tenant_id, order_id) DO UPDATE SET version = EXCLUDED.version,
           last_seq = EXCLUDED.last_seq, status = EXCLUDED.status, venue_ids = EXCLUDED.venue_ids,
           data = EXCLUDED.data, updated_at = now()
         WHERE orders.device_id = EXCLUDED.device_id AND orders.last_seq < EXCLUDED.last_seq
         RETURNING order_id`,
        values: [
          tenantId,
          deviceId,
          events.map((e) => e.id),
          events.map((e) => e.version),
          events.map((e) => e.seq),
          events.map((e) => e.status),
          events.map((e) => JSON.stringify(e.venueIds)),
          events.map((e) => e.createdAt),
          newest.map((e) => e.seq),
        ],
      });
      const done = new Set(written.rows.map((r) => r.order_id));
      if (written.rowCount === newest.length) return { written: done, foreign: [] };
      const { rows } = await db.query<{ order_id: string }>(
        'SELECT order_id FROM orders WHERE tenant_id = $1 AND order_id = ANY($2) AND device_id <> $3',
        [tenantId, newest.filter((e) => !done.has(e.id)).map((e) => e.id), deviceId],
      );
      return { written: done, foreign: rows.map((r) => r.order_id) };
    },
    async insertOrderVersion(s: Source, orderId: string, version: number, orderJson: string, commandJson: string) {
      await db.query(
        `INSERT INTO order_versions (tenant_id, order_id, device_id, seq, version, data, command)
         VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT DO NOTHING`,
        [s.tenantId, orderId, s.deviceId, s.seq, version, orderJson, commandJson],
      );
    },
    /** False when the document is known already: documents are immutable, so its ledger is not booked twice. */
    async insertDocument(
      s: Source,
      d: {
        id: string;
        warehouse: string;
        target: string | null;
        kind: string;
        number: string;
        createdAt: Date;
        json: string;
      },
    ) {
      const r = await db.query(
        `INSERT INTO stock_documents (tenant_id, document_id, device_id, seq, warehouse_id, target_warehouse_id, kind, number, created_at, data)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT (tenant_id, document_id) DO NOTHING`,
        [s.tenantId, d.id, s.deviceId, s.seq, d.warehouse, d.target, d.kind, d.number, d.createdAt, d.json],
      );
      return r.rowCount === 1;
    },
    /** The ledger rows, then every touched balance moved by their sum: two multi-row statements. */
    async bookLedger(tenantId: string, documentId: string, ledger: LedgerTuple[]): Promise<void> {
      if (ledger.length === 0) return;
      await db.query(
        `INSERT INTO stock_ledger (tenant_id, document_id, warehouse_id, line, item_id, unit, delta_micro)
         SELECT $1, $2, w, l, i, u, d FROM unnest($3::text[], $4::int[], $5::text[], $6::text[], $7::bigint[]) AS t(w, l, i, u, d)`,
        [tenantId, documentId, ...columns(ledger)],
      );
      await db.query(
        `INSERT INTO stock_balances (tenant_id, warehouse_id, item_id, unit, qty_micro)
         SELECT $1, w, i, u, sum(d) FROM unnest($2::text[], $3::text[], $4::text[], $5::bigint[]) AS t(w, i, u, d)
         GROUP BY w, i, u ORDER BY w, i, u
         ON CONFLICT (tenant_id, warehouse_id, item_id, unit) DO UPDATE SET qty_micro = stock_balances.qty_micro + EXCLUDED.qty_micro`,
        [tenantId, ...columns(ledger).filter((_, i) => i !== 1)],
      );
    },
    async upsertWarehouse(tenantId: string, id: string, name: string): Promise<void> {
      await db.query(
        // A warehouse of the catalogue (rev > 0) is headquarters' (central wins): a box's rename does not change it.
        `INSERT INTO warehouses (tenant_id, warehouse_id, name) VALUES ($1, $2, $3)
         ON CONFLICT (tenant_id, warehouse_id) DO UPDATE SET name = EXCLUDED.name WHERE warehouses.rev = 0`,
        [tenantId, id, name],
      );
    },
    async setSoldOut(s: Source, b: { venue: string; menu: string; productId: string; reason: string | null }) {
      await db.query(
        `INSERT INTO sold_out (tenant_id, venue_id, product_id, menu_id, reason, device_id) VALUES ($1, $2, $3, $4, $5, $6)
         ON CONFLICT (tenant_id, venue_id, product_id) DO UPDATE SET menu_id = EXCLUDED.menu_id, reason = EXCLUDED.reason,
           device_id = EXCLUDED.device_id, changed_at = now()`,
        [s.tenantId, b.venue, b.productId, b.menu, b.reason, s.deviceId],
      );
    },
    async clearSoldOut(tenantId: string, venue: string, productId: string): Promise<void> {
      await db.query('DELETE FROM sold_out WHERE tenant_id = $1 AND venue_id = $2 AND product_id = $3', [
        tenantId,
        venue,
        productId,
      ]);
    },
  };
}

export type ProjectionRepo = ReturnType<typeof createProjectionRepo>;

/** Ledger tuples as the five column arrays unnest() takes. */
function columns(ledger: LedgerTuple[]): [string[], number[], string[], string[], number[]] {
  return [
    ledger.map((r) => r[0]),
    ledger.map((r) => r[1]),
    ledger.map((r) => r[2]),
    ledger.map((r) => r[3]),
    ledger.map((r) => r[4]),
  ];
}
