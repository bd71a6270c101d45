import { notFound } from '../../../shared/errors.js';
import { formatMoney } from '../../../shared/money.js';
import type { Queryable } from '../../db/pool.js';
import { todayIn, zoneOr } from './dates.js';
import { createReportsRepo, type Range } from './repo.js';
import type { Dashboard, SalesReport } from './schemas.js';

/** The zone of a tenant whose first venue names none PostgreSQL and the runtime both know. */
const DEFAULT_ZONE = 'Europe/Warsaw';
/** A device not heard from for longer is offline on the dashboard. */
export const OFFLINE_AFTER_MS = 15 * 60_000;

/** Orders, revenue and the average ticket (revenue / orders, rounded half up to the minor unit). */
function totals(orders: number, revenueMinor: number) {
  return {
    orders,
    revenue: formatMoney(revenueMinor),
    averageTicket: formatMoney(orders > 0 ? Math.round(revenueMinor / orders) : 0),
  };
}

const average = (sum: number, count: number): number | null => (count > 0 ? Math.round(sum / count) : null);

/** Headquarters' reports over the rollups (docs/sync.md "HQ reports and order search"), and the dashboard. */
export function createReportsService(db: Queryable, now: () => number) {
  const repo = createReportsRepo(db);

  /** An unknown venue is a 404: an empty report would read as a venue that sold nothing. */
  async function checked(tenantId: string, r: Range): Promise<Range> {
    if (r.venueId !== undefined && !(await repo.venueExists(tenantId, r.venueId))) throw notFound('venue');
    return r;
  }

  return {
    async sales(tenantId: string, range: Range, by: 'day' | 'hour'): Promise<SalesReport> {
      const rows = await repo.sales(tenantId, await checked(tenantId, range), by);
      let orders = 0;
      let revenue = 0;
      for (const r of rows) {
        orders += r.orders;
        revenue += r.revenue;
      }
      return {
        from: range.from,
        to: range.to,
        by,
        rows: rows.map((r) => ({
          venueId: r.venue_id,
          venueName: r.venue_name,
          period: r.period,
          ...totals(r.orders, r.revenue),
        })),
        totals: totals(orders, revenue),
      };
    },
    async products(tenantId: string, range: Range, limit: number) {
      const rows = await repo.products(tenantId, await checked(tenantId, range), limit);
      return {
        from: range.from,
        to: range.to,
        rows: rows.map((r) => ({
          productId: r.product_id,
          name: r.name ?? r.product_id,
          quantity: r.quantity,
          revenue: formatMoney(r.revenue),
        })),
      };
    },
    async channels(tenantId: string, range: Range) {
      const rows = await repo.channels(tenantId, await checked(tenantId, range));
      return {
        from: range.from,
        to: range.to,
        rows: rows.map((r) => ({ orderType: r.order_type, ...totals(r.orders, r.revenue) })),
      };
    },
    async kitchen(tenantId: string, range: Range) {
      const rows = await repo.kitchen(tenantId, await checked(tenantId, range));
      return {
        from: range.from,
        to: range.to,
        rows: rows.map((r) => ({
          venueId: r.venue_id,
          venueName: r.venue_name,
          orders: r.orders,
          averageSeconds: average(r.seconds, r.orders) ?? 0,
          maxSeconds: r.max_seconds,
        })),
      };
    },
    async dashboard(tenantId: string): Promise<Dashboard> {
      const at = now();
      const { today, weekFrom } = todayIn(zoneOr(await repo.firstVenueZone(tenantId), DEFAULT_ZONE), at);
      const [venues, hours, devices] = await Promise.all([
        repo.venueSummaries(tenantId, weekFrom, today),
        repo.ordersPerHour(tenantId, today),
        repo.fleet(tenantId),
      ]);
      const perHour = new Map(hours.map((h) => [h.hour, h.orders]));
      const ref = (d: (typeof devices)[number]) => ({ deviceId: d.device_id, name: d.name, venueId: d.venue_id });
      const offline = devices.filter(
        (d) => d.last_contact_at === null || at - d.last_contact_at.getTime() > OFFLINE_AFTER_MS,
      );
      return {
        generatedAt: new Date(at).toISOString(),
        today,
        weekFrom,
        venues: venues.map((v) => ({
          venueId: v.venue_id,
          venueName: v.venue_name,
          today: {
            ...totals(v.today_orders, v.today_revenue),
            kitchenAverageSeconds: average(v.today_kitchen_seconds, v.today_kitchen_orders),
          },
          week: {
            ...totals(v.week_orders, v.week_revenue),
            kitchenAverageSeconds: average(v.week_kitchen_seconds, v.week_kitchen_orders),
          },
        })),
        ordersPerHour: Array.from({ length: 24 }, (_, hour) => ({ hour, orders: perHour.get(hour) ?? 0 })),
        fleet: {
          devices: devices.length,
          online: devices.length - offline.length,
          offline: offline.map((d) => ({ ...ref(d), lastContactAt: d.last_contact_at?.toISOString() ?? null })),
          // How long the box's oldest unsent event has waited: what its hello said, on the central's clock.
          lagging: devices
            .filter((d) => d.lag > 0)
            .map((d) => ({ ...ref(d), lagEvents: d.lag, oldestPendingAt: d.oldest_pending_at?.toISOString() ?? null })),
          deadLetters: devices.filter((d) => d.dead > 0).map((d) => ({ ...ref(d), count: d.dead })),
          rolledBack: devices
            .filter((d) => d.update_report?.state === 'rolledBack')
            .map((d) => ({
              ...ref(d),
              version: d.update_report?.target ?? d.update_report?.version ?? '',
              reason: d.update_report?.reason ?? null,
            })),
        },
      };
    },
  };
}

export type ReportsService = ReturnType<typeof createReportsService>;
