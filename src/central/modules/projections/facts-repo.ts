import pg from 'pg';
import type { Queryable } from '../../db/pool.js';
import type { FactInput } from './facts.js';

/** A venue whose document names no time zone PostgreSQL knows reports in this one (docs/sync.md "HQ reports and order search"). */
export const FALLBACK_TIME_ZONE = 'Europe/Warsaw';

// Time zone names PostgreSQL knows, read once: pg_timezone_names reads the zone files on every query, and a name
// it does not know would make AT TIME ZONE fail the batch.
let zoneNames: Promise<Set<string>> | undefined;
function knownZones(db: Queryable): Promise<Set<string>> {
  zoneNames ??= db.query<{ name: string }>('SELECT name FROM pg_timezone_names').then(
    (r) => new Set(r.rows.map((x) => x.name)),
    (err: unknown) => {
      zoneNames = undefined;
      throw err;
    },
  );
  return zoneNames;
}

// Guards for what the box always sends well: a line the central cannot read counts nothing, never fails a batch.
const QUANTITY = `CASE WHEN l->>'quantity' ~ '^[0-9]{1,9}$' THEN (l->>'quantity')::bigint ELSE 0 END`;
const PRICE = `CASE WHEN l->>'price' ~ '^-?[0-9]{1,13}(\\.[0-9]{1,2})?$' THEN round((l->>'price')::numeric * 100)::bigint ELSE 0 END`;

/** A fact as the rollups need it (a row of order_facts). */
export interface FactRow {
  order_id: string;
  venue_id: string;
  day: string;
  local_hour: number;
  order_type: string;
  sale: boolean;
  total_minor: number;
  kitchen_seconds: number | null;
  ordered_at: Date | null;
  ready_at: Date | null;
}
/** What one fact sold of one product (a row of order_product_facts). */
export interface ProductRow {
  order_id: string;
  venue_id: string;
  product_id: string;
  quantity: number;
  revenue_minor: number;
}

/** Net changes of each rollup's rows (rollups.ts), each list sorted by its key. */
export interface RollupDeltas {
  salesDaily: { venue: string; day: string; type: string; orders: number; revenue: number }[];
  salesHourly: { venue: string; day: string; hour: number; orders: number; revenue: number }[];
  /** `removedMax`/`addedMax`: the largest seconds taken out and put in (null: none). */
  kitchen: {
    venue: string;
    day: string;
    orders: number;
    seconds: number;
    removedMax: number | null;
    addedMax: number | null;
  }[];
  productDaily: { venue: string; day: string; product: string; quantity: number; revenue: number }[];
  productTenant: { day: string; product: string; quantity: number; revenue: number }[];
}

const FACT_COLUMNS = `order_id, venue_id, local_day::text AS day, local_hour, order_type, sale, total_minor, kitchen_seconds,
  ordered_at, ready_at`;
const PRODUCT_COLUMNS = 'order_id, venue_id, product_id, quantity, revenue_minor';

/**
 * SQL of the report facts and their rollups (migration 7). A fact is replaced whole: the old rows deleted, the new
 * made from the orders row; the rollups then move by the net change (rollups.ts), `x = x + d` upserts that read
 * the row's latest value under its lock. Every batch takes rollup rows in one order (table by table, each by key),
 * so batches of one venue or one tenant committing side by side wait for each other but never deadlock.
 */
export function createFactsRepo(db: Queryable) {
  return {
    /**
     * Deletes the orders' facts; returns them, and the time zone of each venue the orders rows (written already)
     * name, for addFacts: one round trip for both.
     */
    async removeFacts(tenantId: string, orderIds: string[]) {
      const { rows } = await db.query<{
        facts: FactRow[] | null;
        products: ProductRow[] | null;
        zones: { venue_id: string; tz: string | null }[] | null;
      }>({
        name: 'facts-remove',
        text: `WITH old AS (DELETE FROM order_facts WHERE tenant_id = $1 AND order_id = ANY($2) RETURNING ${FACT_COLUMNS}),
         oldp AS (DELETE FROM order_product_facts WHERE tenant_id = $1 AND order_id = ANY($2) RETURNING ${PRODUCT_COLUMNS}),
         zones AS (
           SELECT DISTINCT v.venue_id, v.document->>'timeZone' AS tz
           FROM orders o, jsonb_array_elements(o.data->'buckets') b
           JOIN venues v ON v.tenant_id = $1 AND v.venue_id = b.value->>'venue'
           WHERE o.tenant_id = $1 AND o.order_id = ANY($2)
         )
         SELECT (SELECT json_agg(old) FROM old) AS facts, (SELECT json_agg(oldp) FROM oldp) AS products,
           (SELECT json_agg(zones) FROM zones) AS zones`,
        values: [tenantId, orderIds],
      });
      const r = rows[0];
      return { facts: revive(r?.facts ?? []), products: r?.products ?? [], zones: r?.zones ?? [] };
    },
    /** Makes the orders' facts from their orders rows (one per venue of their buckets); returns them. */
    async addFacts(
      tenantId: string,
      inputs: FactInput[],
      venues: { venue_id: string; tz: string | null }[],
    ): Promise<{ facts: FactRow[]; products: ProductRow[] }> {
      const zones = await knownZones(db);
      const { rows } = await db.query<{ facts: FactRow[] | null; products: ProductRow[] | null }>({
        name: 'facts-add',
        text: `WITH input AS (
           SELECT * FROM unnest($2::text[], $3::text[], $4::timestamptz[], $5::timestamptz[]) AS t(order_id, contact, ordered_at, ready_at)
         ), zone AS (
           SELECT * FROM unnest($6::text[], $7::text[]) AS z(venue_id, tz)
         ), bucket AS (
           SELECT o.order_id, o.created_at, b.value AS bucket, b.n FROM orders o JOIN input i USING (order_id),
             jsonb_array_elements(o.data->'buckets') WITH ORDINALITY AS b(value, n)
           WHERE o.tenant_id = $1
         ), line AS (
           SELECT b.order_id, b.created_at, b.bucket->>'venue' AS venue_id, coalesce(l->>'productId', '') AS product_id,
             coalesce(l->'product'->'literals'->>'name', l->'product'->'details'->'literals'->>'name') AS name, ${QUANTITY} AS quantity, ${PRICE} AS price_minor
           FROM bucket b,
             jsonb_array_elements(CASE jsonb_typeof(b.bucket->'lines') WHEN 'array' THEN b.bucket->'lines' ELSE '[]' END) AS l
           -- What was ordered: a NEW line is still in the basket, a CANCELLED one was taken back (the box's total).
           WHERE l->>'status' = 'ORDERED'
         ), venue AS (
           SELECT order_id, bucket->>'venue' AS venue_id, min(n) AS n FROM bucket GROUP BY 1, 2
         ), facts AS (
           INSERT INTO order_facts (tenant_id, order_id, venue_id, first_venue, device_id, status, order_type, source,
             created_at, local_day, local_hour, total_minor, ordered_at, ready_at, contact_text, contact)
           SELECT $1, o.order_id, v.venue_id, v.n = 1, o.device_id, o.status, coalesce(o.data->>'orderType', ''),
             coalesce(o.data->>'source', ''), o.created_at, (o.created_at AT TIME ZONE z.tz)::date,
             extract(hour FROM o.created_at AT TIME ZONE z.tz)::smallint,
             coalesce((SELECT sum(l.quantity * l.price_minor) FROM line l WHERE l.order_id = o.order_id AND l.venue_id = v.venue_id), 0),
             i.ordered_at, i.ready_at,
             CASE WHEN jsonb_typeof(i.contact::jsonb) = 'object' THEN
               lower(concat_ws(' ', i.contact::jsonb->>'name', i.contact::jsonb->>'phone', i.contact::jsonb->>'email')) ELSE '' END,
             CASE WHEN jsonb_typeof(i.contact::jsonb) = 'object' THEN i.contact::jsonb END
           FROM venue v JOIN orders o ON o.tenant_id = $1 AND o.order_id = v.order_id
           -- Every venue of an order has its fact, zone or not: an order without one would vanish from the search.
           JOIN input i ON i.order_id = v.order_id
           CROSS JOIN LATERAL (SELECT coalesce((SELECT tz FROM zone WHERE zone.venue_id = v.venue_id), $8) AS tz) z
           RETURNING ${FACT_COLUMNS}
         ), products AS (
           INSERT INTO order_product_facts (tenant_id, order_id, venue_id, product_id, quantity, revenue_minor)
           SELECT $1, order_id, venue_id, product_id, sum(quantity), sum(quantity * price_minor) FROM line GROUP BY 2, 3, 4
           RETURNING ${PRODUCT_COLUMNS}
         ), names AS (
           INSERT INTO product_names (tenant_id, product_id, name, seen_at)
           SELECT DISTINCT ON (product_id) $1, product_id, name, created_at FROM line WHERE name IS NOT NULL
           ORDER BY product_id, created_at DESC
           ON CONFLICT (tenant_id, product_id) DO UPDATE SET name = EXCLUDED.name, seen_at = EXCLUDED.seen_at
           WHERE product_names.seen_at <= EXCLUDED.seen_at
         )
         SELECT (SELECT json_agg(facts) FROM facts) AS facts, (SELECT json_agg(products) FROM products) AS products`,
        values: [
          tenantId,
          inputs.map((i) => i.orderId),
          inputs.map((i) => i.contact),
          inputs.map((i) => i.orderedAt),
          inputs.map((i) => i.readyAt),
          venues.map((v) => v.venue_id),
          venues.map((v) => (v.tz !== null && zones.has(v.tz) ? v.tz : FALLBACK_TIME_ZONE)),
          FALLBACK_TIME_ZONE,
        ],
      });
      return { facts: revive(rows[0]?.facts ?? []), products: rows[0]?.products ?? [] };
    },
    /**
     * Moves each rollup by its net change: one statement per table, sent together as one simple query so they run
     * in this order, in one round trip; each takes its rows in key order (an upsert locks rows in the order it
     * inserts them). The changes travel as JSON literals (pg's escapeLiteral): a simple query has no parameters.
     * A kitchen maximum taken out and not matched by what came in is marked -1; `recomputeKitchenMax` reads it
     * from the facts.
     */
    async applyDeltas(tenantId: string, d: RollupDeltas): Promise<void> {
      const rows = (list: unknown[], columns: string) =>
        `json_to_recordset(${pg.escapeLiteral(JSON.stringify(list))}) AS x(${columns})`;
      const tenant = pg.escapeLiteral(tenantId);
      const statements: string[] = [];
      if (d.salesDaily.length > 0)
        statements.push(`INSERT INTO sales_daily (tenant_id, venue_id, local_day, order_type, orders, revenue_minor)
          SELECT ${tenant}, venue, day, type, orders, revenue
          FROM ${rows(d.salesDaily, 'venue text, day date, type text, orders bigint, revenue bigint')} ORDER BY venue, day, type
          ON CONFLICT (tenant_id, venue_id, local_day, order_type) DO UPDATE SET orders = sales_daily.orders + EXCLUDED.orders,
            revenue_minor = sales_daily.revenue_minor + EXCLUDED.revenue_minor`);
      if (d.salesHourly.length > 0)
        statements.push(`INSERT INTO sales_hourly (tenant_id, venue_id, local_day, local_hour, orders, revenue_minor)
          SELECT ${tenant}, venue, day, hour, orders, revenue
          FROM ${rows(d.salesHourly, 'venue text, day date, hour smallint, orders bigint, revenue bigint')} ORDER BY venue, day, hour
          ON CONFLICT (tenant_id, venue_id, local_day, local_hour) DO UPDATE SET orders = sales_hourly.orders + EXCLUDED.orders,
            revenue_minor = sales_hourly.revenue_minor + EXCLUDED.revenue_minor`);
      if (d.kitchen.length > 0) {
        const kitchen = rows(
          d.kitchen,
          'venue text, day date, orders bigint, seconds bigint, "removedMax" bigint, "addedMax" bigint',
        );
        statements.push(`INSERT INTO kitchen_daily AS k (tenant_id, venue_id, local_day, orders, seconds_sum, seconds_max)
          SELECT ${tenant}, venue, day, orders, seconds, coalesce("addedMax", 0) FROM ${kitchen} ORDER BY venue, day
          ON CONFLICT (tenant_id, venue_id, local_day) DO UPDATE SET orders = k.orders + EXCLUDED.orders,
            seconds_sum = k.seconds_sum + EXCLUDED.seconds_sum,
            seconds_max = CASE
              WHEN k.seconds_max < 0 THEN -1
              WHEN EXISTS (SELECT 1 FROM ${kitchen} WHERE x.venue = EXCLUDED.venue_id AND x.day = EXCLUDED.local_day
                AND x."removedMax" >= k.seconds_max AND coalesce(x."addedMax", -1) < x."removedMax") THEN -1
              ELSE greatest(k.seconds_max, EXCLUDED.seconds_max) END`);
      }
      if (d.productDaily.length > 0)
        statements.push(`INSERT INTO product_daily (tenant_id, venue_id, local_day, product_id, quantity, revenue_minor)
          SELECT ${tenant}, venue, day, product, quantity, revenue
          FROM ${rows(d.productDaily, 'venue text, day date, product text, quantity bigint, revenue bigint')}
          ORDER BY venue, day, product
          ON CONFLICT (tenant_id, venue_id, local_day, product_id) DO UPDATE SET
            quantity = product_daily.quantity + EXCLUDED.quantity, revenue_minor = product_daily.revenue_minor + EXCLUDED.revenue_minor`);
      if (d.productTenant.length > 0)
        statements.push(`INSERT INTO product_daily_tenant (tenant_id, local_day, product_id, quantity, revenue_minor)
          SELECT ${tenant}, day, product, quantity, revenue
          FROM ${rows(d.productTenant, 'day date, product text, quantity bigint, revenue bigint')} ORDER BY day, product
          ON CONFLICT (tenant_id, local_day, product_id) DO UPDATE SET
            quantity = product_daily_tenant.quantity + EXCLUDED.quantity,
            revenue_minor = product_daily_tenant.revenue_minor + EXCLUDED.revenue_minor`);
      if (statements.length > 0) await db.query(statements.join(';\n'));
    },
    /**
     * Kitchen maxima marked -1, recomputed from the facts. This statement starts after applyDeltas locked those
     * rows, so it sees every other batch's committed facts of that day (READ COMMITTED).
     */
    async recomputeKitchenMax(tenantId: string): Promise<void> {
      await db.query(
        `UPDATE kitchen_daily k SET seconds_max = coalesce((SELECT max(f.kitchen_seconds) FROM order_facts f
           WHERE f.tenant_id = k.tenant_id AND f.venue_id = k.venue_id AND f.local_day = k.local_day
             AND f.kitchen_seconds IS NOT NULL), 0)
         WHERE k.tenant_id = $1 AND k.seconds_max < 0`,
        [tenantId],
      );
    },
  };
}

/** json_agg gives instants as text: back to Dates. */
function revive(rows: FactRow[]): FactRow[] {
  return rows.map((r) => ({
    ...r,
    ordered_at: r.ordered_at === null ? null : new Date(r.ordered_at),
    ready_at: r.ready_at === null ? null : new Date(r.ready_at),
  }));
}
