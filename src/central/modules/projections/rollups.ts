import type { FactRow, ProductRow, RollupDeltas } from './facts-repo.js';

/**
 * The rollups' net change when `before` facts are replaced by `after` ones (docs/sync.md "HQ reports and order
 * search"): each key's sums from `after` minus those from `before`, keys whose change is nil left out (a version
 * that moves nothing takes no rollup lock), every list sorted by key, the order in which the rows are locked.
 */
export function rollupDeltas(
  before: { facts: FactRow[]; products: ProductRow[] },
  after: { facts: FactRow[]; products: ProductRow[] },
): RollupDeltas {
  const daily = new Map<string, { venue: string; day: string; type: string; orders: number; revenue: number }>();
  const hourly = new Map<string, { venue: string; day: string; hour: number; orders: number; revenue: number }>();
  const kitchen = new Map<
    string,
    { venue: string; day: string; orders: number; seconds: number; removedMax: number | null; addedMax: number | null }
  >();
  const product = new Map<string, { venue: string; day: string; product: string; quantity: number; revenue: number }>();
  const tenant = new Map<string, { day: string; product: string; quantity: number; revenue: number }>();
  const at = <V>(map: Map<string, V>, key: string, fresh: () => V): V => {
    const seen = map.get(key);
    if (seen) return seen;
    const v = fresh();
    map.set(key, v);
    return v;
  };
  const max = (a: number | null, b: number): number => (a === null || b > a ? b : a);

  for (const [sign, side] of [
    [-1, before],
    [1, after],
  ] as const) {
    const factOf = new Map(side.facts.map((f) => [`${f.order_id}\n${f.venue_id}`, f]));
    for (const f of side.facts) {
      if (f.sale) {
        const d = at(daily, `${f.venue_id}\n${f.day}\n${f.order_type}`, () => ({
          venue: f.venue_id,
          day: f.day,
          type: f.order_type,
          orders: 0,
          revenue: 0,
        }));
        d.orders += sign;
        d.revenue += sign * f.total_minor;
        const h = at(hourly, `${f.venue_id}\n${f.day}\n${f.local_hour}`, () => ({
          venue: f.venue_id,
          day: f.day,
          hour: f.local_hour,
          orders: 0,
          revenue: 0,
        }));
        h.orders += sign;
        h.revenue += sign * f.total_minor;
      }
      if (f.kitchen_seconds !== null) {
        const k = at(kitchen, `${f.venue_id}\n${f.day}`, () => ({
          venue: f.venue_id,
          day: f.day,
          orders: 0,
          seconds: 0,
          removedMax: null as number | null,
          addedMax: null as number | null,
        }));
        k.orders += sign;
        k.seconds += sign * f.kitchen_seconds;
        if (sign < 0) k.removedMax = max(k.removedMax, f.kitchen_seconds);
        else k.addedMax = max(k.addedMax, f.kitchen_seconds);
      }
    }
    for (const p of side.products) {
      const f = factOf.get(`${p.order_id}\n${p.venue_id}`);
      if (!f?.sale) continue;
      const v = at(product, `${p.venue_id}\n${f.day}\n${p.product_id}`, () => ({
        venue: p.venue_id,
        day: f.day,
        product: p.product_id,
        quantity: 0,
        revenue: 0,
      }));
      v.quantity += sign * p.quantity;
      v.revenue += sign * p.revenue_minor;
      const t = at(tenant, `${f.day}\n${p.product_id}`, () => ({
        day: f.day,
        product: p.product_id,
        quantity: 0,
        revenue: 0,
      }));
      t.quantity += sign * p.quantity;
      t.revenue += sign * p.revenue_minor;
    }
  }
  const sorted = <V>(map: Map<string, V>, keep: (v: V) => boolean): V[] =>
    [...map.entries()]
      .filter(([, v]) => keep(v))
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([, v]) => v);
  return {
    salesDaily: sorted(daily, (v) => v.orders !== 0 || v.revenue !== 0),
    salesHourly: sorted(hourly, (v) => v.orders !== 0 || v.revenue !== 0),
    kitchen: sorted(kitchen, (v) => v.orders !== 0 || v.seconds !== 0 || v.removedMax !== v.addedMax),
    productDaily: sorted(product, (v) => v.quantity !== 0 || v.revenue !== 0),
    productTenant: sorted(tenant, (v) => v.quantity !== 0 || v.revenue !== 0),
  };
}

/** Whether a kitchen maximum may have been taken out and not matched: its row is then recomputed. */
export const kitchenMaxMayDrop = (d: RollupDeltas): boolean =>
  d.kitchen.some((k) => k.removedMax !== null && (k.addedMax === null || k.addedMax < k.removedMax));
