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

/** Each rollup moved by `sign` times the shares of the facts in `facts` and `products` (CTE names). */
const rollups = (sign: '+' | '-', facts: string, products: string) => `
  sd AS (INSERT INTO sales_daily (tenant_id, venue_id, local_day, order_type, orders, revenue_minor)
    SELECT tenant_id, venue_id, local_day, order_type, ${sign}count(*), ${sign}sum(total_minor) FROM ${facts} WHERE sale
    GROUP BY 1, 2, 3, 4
    ON CONFLICT (tenant_id, venue_id, local_day, order_type) DO UPDATE SET orders = sales_daily.orders + EXCLUDED.orders,
      revenue_minor = sales_daily.revenue_minor + EXCLUDED.revenue_minor),
  sh AS (INSERT INTO sales_hourly (tenant_id, venue_id, local_day, local_hour, orders, revenue_minor)
    SELECT tenant_id, venue_id, local_day, local_hour, ${sign}count(*), ${sign}sum(total_minor) FROM ${facts} WHERE sale
    GROUP BY 1, 2, 3, 4
    ON CONFLICT (tenant_id, venue_id, local_day, local_hour) DO UPDATE SET orders = sales_hourly.orders + EXCLUDED.orders,
      revenue_minor = sales_hourly.revenue_minor + EXCLUDED.revenue_minor),
  kd AS (INSERT INTO kitchen_daily (tenant_id, venue_id, local_day, orders, seconds_sum, seconds_max)
    SELECT tenant_id, venue_id, local_day, ${sign}count(*), ${sign}sum(kitchen_seconds), max(kitchen_seconds) FROM ${facts}
    WHERE kitchen_seconds IS NOT NULL GROUP BY 1, 2, 3
    ON CONFLICT (tenant_id, venue_id, local_day) DO UPDATE SET orders = kitchen_daily.orders + EXCLUDED.orders,
      seconds_sum = kitchen_daily.seconds_sum + EXCLUDED.seconds_sum,
      seconds_max = ${
        sign === '+'
          ? 'CASE WHEN kitchen_daily.seconds_max < 0 THEN -1 ELSE greatest(kitchen_daily.seconds_max, EXCLUDED.seconds_max) END'
          : // Removing the maximum (or a tie of it): -1 until recomputed from the facts (recomputeKitchenMax).
            'CASE WHEN EXCLUDED.seconds_max >= kitchen_daily.seconds_max THEN -1 ELSE kitchen_daily.seconds_max END'
      }),
  pd AS (INSERT INTO product_daily (tenant_id, venue_id, local_day, product_id, quantity, revenue_minor)
    SELECT p.tenant_id, p.venue_id, f.local_day, p.product_id, ${sign}sum(p.quantity), ${sign}sum(p.revenue_minor)
    FROM ${products} p JOIN ${facts} f USING (order_id, venue_id) WHERE f.sale GROUP BY 1, 2, 3, 4
    ON CONFLICT (tenant_id, venue_id, local_day, product_id) DO UPDATE SET
      quantity = product_daily.quantity + EXCLUDED.quantity, revenue_minor = product_daily.revenue_minor + EXCLUDED.revenue_minor),
  pt AS (INSERT INTO product_daily_tenant (tenant_id, local_day, product_id, quantity, revenue_minor)
    SELECT p.tenant_id, f.local_day, p.product_id, ${sign}sum(p.quantity), ${sign}sum(p.revenue_minor)
    FROM ${products} p JOIN ${facts} f USING (order_id, venue_id) WHERE f.sale GROUP BY 1, 2, 3
    ON CONFLICT (tenant_id, local_day, product_id) DO UPDATE SET
      quantity = product_daily_tenant.quantity + EXCLUDED.quantity,
      revenue_minor = product_daily_tenant.revenue_minor + EXCLUDED.revenue_minor)`;

/**
 * SQL of the report facts and their rollups (migration 7). A fact is replaced whole: the old rows are deleted and
 * their shares subtracted, then the new rows are made from the orders row and added. Rollups move by `x = x + d`
 * upserts, which take the row's lock and read its latest value, so batches of devices of one venue committing
 * side by side never lose each other's share.
 */
export function createFactsRepo(db: Queryable) {
  return {
    /** Deletes the orders' facts and subtracts their shares; returns each order's first instants and whether a kitchen maximum may be stale. */
    async removeFacts(tenantId: string, orderIds: string[]) {
      const { rows } = await db.query<{
        order_id: string;
        ordered_at: Date | null;
        ready_at: Date | null;
        kitchen: boolean;
      }>(
        `WITH old AS (DELETE FROM order_facts WHERE tenant_id = $1 AND order_id = ANY($2) RETURNING *),
         oldp AS (DELETE FROM order_product_facts WHERE tenant_id = $1 AND order_id = ANY($2) RETURNING *),
         ${rollups('-', 'old', 'oldp')}
         SELECT order_id, min(ordered_at) AS ordered_at, min(ready_at) AS ready_at,
           bool_or(kitchen_seconds IS NOT NULL) AS kitchen FROM old GROUP BY order_id`,
        [tenantId, orderIds],
      );
      return rows;
    },
    /** Makes the orders' facts from their orders rows (one per venue of their buckets) and adds their shares. */
    async addFacts(tenantId: string, inputs: FactInput[]): Promise<void> {
      const venues = await db.query<{ venue_id: string; tz: string | null }>(
        `SELECT DISTINCT v.venue_id, v.document->>'timeZone' AS tz
         FROM orders o, jsonb_array_elements(o.data->'buckets') b
         JOIN venues v ON v.tenant_id = $1 AND v.venue_id = b.value->>'venue'
         WHERE o.tenant_id = $1 AND o.order_id = ANY($2)`,
        [tenantId, inputs.map((i) => i.orderId)],
      );
      const zones = await knownZones(db);
      await db.query(
        `WITH input AS (
           SELECT * FROM unnest($2::text[], $3::text[], $4::timestamptz[], $5::timestamptz[]) AS t(order_id, contact, ordered_at, ready_at)
         ), zone AS (
           SELECT * FROM unnest($6::text[], $7::text[]) AS z(venue_id, tz)
         ), bucket AS (
           SELECT o.order_id, o.created_at, b.value AS bucket, b.n FROM orders o JOIN input i USING (order_id),
             jsonb_array_elements(o.data->'buckets') WITH ORDINALITY AS b(value, n)
           WHERE o.tenant_id = $1
         ), line AS (
           SELECT b.order_id, b.created_at, b.bucket->>'venue' AS venue_id, coalesce(l->>'productId', '') AS product_id,
             l->'product'->'details'->'literals'->>'name' AS name, ${QUANTITY} AS quantity, ${PRICE} AS price_minor
           FROM bucket b,
             jsonb_array_elements(CASE jsonb_typeof(b.bucket->'lines') WHEN 'array' THEN b.bucket->'lines' ELSE '[]' END) AS l
           WHERE coalesce(l->>'status', '') <> 'CANCELLED'
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
           JOIN input i ON i.order_id = v.order_id JOIN zone z ON z.venue_id = v.venue_id
           RETURNING *
         ), products AS (
           INSERT INTO order_product_facts (tenant_id, order_id, venue_id, product_id, quantity, revenue_minor)
           SELECT $1, order_id, venue_id, product_id, sum(quantity), sum(quantity * price_minor) FROM line GROUP BY 2, 3, 4
           RETURNING *
         ), names AS (
           INSERT INTO product_names (tenant_id, product_id, name, seen_at)
           SELECT DISTINCT ON (product_id) $1, product_id, name, created_at FROM line WHERE name IS NOT NULL
           ORDER BY product_id, created_at DESC
           ON CONFLICT (tenant_id, product_id) DO UPDATE SET name = EXCLUDED.name, seen_at = EXCLUDED.seen_at
           WHERE product_names.seen_at <= EXCLUDED.seen_at
         ),
         ${rollups('+', 'facts', 'products')}
         SELECT 1`,
        [
          tenantId,
          inputs.map((i) => i.orderId),
          inputs.map((i) => i.contact),
          inputs.map((i) => i.orderedAt),
          inputs.map((i) => i.readyAt),
          venues.rows.map((v) => v.venue_id),
          venues.rows.map((v) => (v.tz !== null && zones.has(v.tz) ? v.tz : FALLBACK_TIME_ZONE)),
        ],
      );
    },
    /**
     * Kitchen maxima marked -1 by a removal, recomputed from the facts. This statement starts after the removal
     * locked those rows, so it sees every other batch's committed facts of that day (READ COMMITTED).
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
