import { notFound } from '../../../shared/errors.js';
import { formatMoney } from '../../../shared/money.js';
import type { Queryable } from '../../db/pool.js';
import type { DeviceView } from '../devices/repo.js';
import type { DeviceService } from '../devices/service.js';
import { createTenantRepo } from '../tenants/repo.js';
import { todayIn, zoneOr } from './dates.js';
import { createReportsRepo, type Range } from './repo.js';
import type { Dashboard, SalesReport } from './schemas.js';

/** The zone of a tenant whose first venue names none PostgreSQL and the runtime both know. */
const DEFAULT_ZONE = 'Europe/Warsaw';

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
export function createReportsService(db: Queryable, devices: Pick<DeviceService, 'list'>, now: () => number) {
  const repo = createReportsRepo(db);
  const tenants = createTenantRepo(db);

  /** An unknown venue is a 404: an empty report would read as a venue that sold nothing. */
  async function checked(tenantId: string, r: Range): Promise<Range> {
    if (r.venueId !== undefined && !(await tenants.venueExists(tenantId, r.venueId))) throw notFound('venue');
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
      const [venues, hours, all] = await Promise.all([
        repo.venueSummaries(tenantId, weekFrom, today),
        repo.ordersPerHour(tenantId, today),
        devices.list(tenantId),
      ]);
      // The fleet as the devices module lists it (its own rule for online: docs/sync.md "API").
      const fleet = all.filter((d) => d.status === 'active');
      const perHour = new Map(hours.map((h) => [h.hour, h.orders]));
      const ref = (d: DeviceView) => ({ deviceId: d.id, name: d.name, venueId: d.venue });
      const offline = fleet.filter((d) => !d.online);
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
          devices: fleet.length,
          online: fleet.length - offline.length,
          offline: offline.map((d) => ({ ...ref(d), lastContactAt: d.lastContactAt })),
          // How long the box's oldest unsent event has waited: what its hello said, on the central's clock.
          lagging: fleet
            .filter((d) => d.lagEvents > 0)
            .map((d) => ({ ...ref(d), lagEvents: d.lagEvents, oldestPendingAt: d.oldestPendingAt })),
          deadLetters: fleet.filter((d) => d.deadLetters > 0).map((d) => ({ ...ref(d), count: d.deadLetters })),
          rolledBack: fleet
            .filter((d) => d.update?.state === 'rolledBack')
            .map((d) => ({
              ...ref(d),
              version: d.update?.target ?? d.update?.version ?? '',
              reason: d.update?.reason ?? null,
            })),
        },
      };
    },
  };
}

export type ReportsService = ReturnType<typeof createReportsService>;
