import type { Queryable } from '../../db/pool.js';

export interface Range {
  from: string;
  to: string;
  venueId?: string;
}

/**
 * SQL of the reports: the rollups of migration 7 summed over venue-local days (each rollup's key starts with
 * tenant and venue, and each has a (tenant, day) index for the whole chain). The dashboard's fleet is the devices
 * module's list. Rows whose shares were all subtracted again (orders 0) are left out.
 */
export function createReportsRepo(db: Queryable) {
  const venueFilter = 'AND ($4::text IS NULL OR s.venue_id = $4)';
  const params = (tenantId: string, r: Range) => [tenantId, r.from, r.to, r.venueId ?? null];
  return {
    async sales(tenantId: string, r: Range, by: 'day' | 'hour') {
      const period =
        by === 'day'
          ? `to_char(s.local_day, 'YYYY-MM-DD')`
          : `to_char(s.local_day, 'YYYY-MM-DD') || 'T' || lpad(s.local_hour::text, 2, '0')`;
      const { rows } = await db.query<{
        venue_id: string;
        venue_name: string;
        period: string;
        orders: number;
        revenue: number;
      }>(
        `SELECT s.venue_id, v.name AS venue_name, ${period} AS period, sum(s.orders)::bigint AS orders,
           sum(s.revenue_minor)::bigint AS revenue
         FROM ${by === 'day' ? 'sales_daily' : 'sales_hourly'} s
         JOIN venues v ON v.tenant_id = s.tenant_id AND v.venue_id = s.venue_id
         WHERE s.tenant_id = $1 AND s.local_day BETWEEN $2 AND $3 ${venueFilter}
         GROUP BY 1, 2, 3 HAVING sum(s.orders) > 0 ORDER BY period, venue_name, s.venue_id`,
        params(tenantId, r),
      );
      return rows;
    },
    /** The chain's products from the tenant rollup, one venue's from the venue rollup. */
    async products(tenantId: string, r: Range, limit: number) {
      const source = r.venueId === undefined ? 'product_daily_tenant' : 'product_daily';
      const { rows } = await db.query<{ product_id: string; name: string | null; quantity: number; revenue: number }>(
        `SELECT s.product_id, n.name, s.quantity, s.revenue FROM (
           SELECT s.product_id, sum(s.quantity)::bigint AS quantity, sum(s.revenue_minor)::bigint AS revenue
           FROM ${source} s WHERE s.tenant_id = $1 AND s.local_day BETWEEN $2 AND $3
             ${r.venueId === undefined ? 'AND $4::text IS NULL' : 'AND s.venue_id = $4'}
           GROUP BY 1 HAVING sum(s.quantity) <> 0 OR sum(s.revenue_minor) <> 0
           ORDER BY revenue DESC, s.product_id LIMIT $5) s
         LEFT JOIN product_names n ON n.tenant_id = $1 AND n.product_id = s.product_id
         ORDER BY s.revenue DESC, s.product_id`,
        [...params(tenantId, r), limit],
      );
      return rows;
    },
    async channels(tenantId: string, r: Range) {
      const { rows } = await db.query<{ order_type: string; orders: number; revenue: number }>(
        `SELECT s.order_type, sum(s.orders)::bigint AS orders, sum(s.revenue_minor)::bigint AS revenue FROM sales_daily s
         WHERE s.tenant_id = $1 AND s.local_day BETWEEN $2 AND $3 ${venueFilter}
         GROUP BY 1 HAVING sum(s.orders) > 0 ORDER BY orders DESC, s.order_type`,
        params(tenantId, r),
      );
      return rows;
    },
    async kitchen(tenantId: string, r: Range) {
      const { rows } = await db.query<{
        venue_id: string;
        venue_name: string;
        orders: number;
        seconds: number;
        max_seconds: number;
      }>(
        `SELECT s.venue_id, v.name AS venue_name, sum(s.orders)::bigint AS orders, sum(s.seconds_sum)::bigint AS seconds,
           max(s.seconds_max) AS max_seconds
         FROM kitchen_daily s JOIN venues v ON v.tenant_id = s.tenant_id AND v.venue_id = s.venue_id
         WHERE s.tenant_id = $1 AND s.local_day BETWEEN $2 AND $3 AND s.orders > 0 ${venueFilter}
         GROUP BY 1, 2 ORDER BY venue_name, s.venue_id`,
        params(tenantId, r),
      );
      return rows;
    },
    /** The zone of the tenant's first venue (by id) that is not retired; null when it has none. */
    async firstVenueZone(tenantId: string): Promise<string | null | undefined> {
      const { rows } = await db.query<{ tz: string | null }>(
        `SELECT document->>'timeZone' AS tz FROM venues WHERE tenant_id = $1 AND retired_at IS NULL ORDER BY venue_id LIMIT 1`,
        [tenantId],
      );
      return rows[0]?.tz;
    },
    /** Each live venue's sales and kitchen on `today` and from `weekFrom` to `today`. */
    async venueSummaries(tenantId: string, weekFrom: string, today: string) {
      const { rows } = await db.query<{
        venue_id: string;
        venue_name: string;
        today_orders: number;
        today_revenue: number;
        week_orders: number;
        week_revenue: number;
        today_kitchen_orders: number;
        today_kitchen_seconds: number;
        week_kitchen_orders: number;
        week_kitchen_seconds: number;
      }>(
        `SELECT v.venue_id, v.name AS venue_name,
           coalesce(s.today_orders, 0) AS today_orders, coalesce(s.today_revenue, 0) AS today_revenue,
           coalesce(s.week_orders, 0) AS week_orders, coalesce(s.week_revenue, 0) AS week_revenue,
           coalesce(k.today_orders, 0) AS today_kitchen_orders, coalesce(k.today_seconds, 0) AS today_kitchen_seconds,
           coalesce(k.week_orders, 0) AS week_kitchen_orders, coalesce(k.week_seconds, 0) AS week_kitchen_seconds
         FROM venues v
         LEFT JOIN (
           SELECT venue_id, sum(orders) FILTER (WHERE local_day = $3)::bigint AS today_orders,
             sum(revenue_minor) FILTER (WHERE local_day = $3)::bigint AS today_revenue,
             sum(orders)::bigint AS week_orders, sum(revenue_minor)::bigint AS week_revenue
           FROM sales_daily WHERE tenant_id = $1 AND local_day BETWEEN $2 AND $3 GROUP BY 1
         ) s ON s.venue_id = v.venue_id
         LEFT JOIN (
           SELECT venue_id, sum(orders) FILTER (WHERE local_day = $3)::bigint AS today_orders,
             sum(seconds_sum) FILTER (WHERE local_day = $3)::bigint AS today_seconds,
             sum(orders)::bigint AS week_orders, sum(seconds_sum)::bigint AS week_seconds
           FROM kitchen_daily WHERE tenant_id = $1 AND local_day BETWEEN $2 AND $3 GROUP BY 1
         ) k ON k.venue_id = v.venue_id
         WHERE v.tenant_id = $1 AND v.retired_at IS NULL ORDER BY v.name, v.venue_id`,
        [tenantId, weekFrom, today],
      );
      return rows;
    },
    async ordersPerHour(tenantId: string, day: string) {
      const { rows } = await db.query<{ hour: number; orders: number }>(
        `SELECT local_hour AS hour, sum(orders)::bigint AS orders FROM sales_hourly
         WHERE tenant_id = $1 AND local_day = $2 GROUP BY 1`,
        [tenantId, day],
      );
      return rows;
    },
  };
}
