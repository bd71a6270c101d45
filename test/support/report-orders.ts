import { randomUUID } from 'node:crypto';
import type { SimDevice } from './sim-device.js';

// Orders made by a test of headquarters' reports, kept as the test made them, and the reports computed from them
// in plain JS: by the definitions in docs/sync.md "HQ reports and order search", never from the central's rollups.

export interface Line {
  productId: string;
  name: string;
  quantity: number;
  price: string;
  status?: 'NEW' | 'ORDERED' | 'CANCELLED';
}
export interface Version {
  status: string;
  confirmedAt: string;
  buckets: { venue: string; lines: Line[] }[];
}
export interface Made {
  id: string;
  device: SimDevice;
  orderType: string;
  source: string;
  created: string;
  contact: Record<string, string> | null;
  versions: Version[];
  /** How many versions the central has been sent (the first `sent`). */
  sent: number;
}

const ZONE = 'Europe/Warsaw';
const SALE = ['ORDERED', 'READY', 'COMPLETED'];
const minor = (price: string) => Math.round(Number(price) * 100);
const money = (m: number) =>
  `${m < 0 ? '-' : ''}${Math.trunc(Math.abs(m) / 100)}.${String(Math.abs(m) % 100).padStart(2, '0')}`;
const totals = (orders: number, revenue: number) => ({
  orders,
  revenue: money(revenue),
  averageTicket: money(orders > 0 ? Math.round(revenue / orders) : 0),
});

/** The date and hour at `iso` on a Warsaw clock. */
export function warsaw(iso: string): { day: string; hour: number } {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-CA', {
      timeZone: ZONE,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      hourCycle: 'h23',
    })
      .formatToParts(new Date(iso))
      .map((p) => [p.type, p.value]),
  );
  return { day: `${parts.year}-${parts.month}-${parts.day}`, hour: Number(parts.hour) };
}

/** Appends version `n` (0-based) of `m` to its device's outbox, as the box's order.changed event. */
export function appendVersion(tenant: string, m: Made, n: number): void {
  const v = m.versions[n]!;
  m.device.append('order.changed', m.id, {
    version: n + 1,
    command: {
      correlationId: randomUUID(),
      kind: n === 0 ? 'new' : 'update',
      userId: 'u',
      staff: true,
      confirmedAt: v.confirmedAt,
    },
    order: {
      id: m.id,
      tenant,
      created: m.created,
      lastChanged: v.confirmedAt,
      status: v.status,
      orderType: m.orderType,
      source: m.source,
      total: '0.00',
      buckets: v.buckets.map((b) => ({
        venue: b.venue,
        lines: b.lines.map((l, i) => ({
          id: `${m.id}-${b.venue}-${i}`,
          productId: l.productId,
          quantity: l.quantity,
          price: l.price,
          status: l.status ?? 'ORDERED',
          // The box's own line snapshot (src/modules/provisioning/service.ts productSnapshot).
          product: { kind: 'product', id: l.productId, literals: { name: l.name }, price: l.price },
        })),
      })),
    },
    detail: { contact: m.contact, extra: null, rounds: 1, lineRounds: {} },
  });
}

/** One row per order and venue of what the central has been sent: the facts as docs/sync.md defines them. */
export function factsOf(made: Made[]) {
  return made
    .filter((m) => m.sent > 0)
    .flatMap((m) => {
      const sent = m.versions.slice(0, m.sent);
      const last = sent[sent.length - 1]!;
      const first = (ok: (s: string) => boolean) => sent.find((v) => ok(v.status))?.confirmedAt ?? null;
      const orderedAt = first((s) => SALE.includes(s));
      const readyAt = first((s) => s === 'READY');
      const { day, hour } = warsaw(m.created);
      const venues = [...new Set(last.buckets.map((b) => b.venue))];
      return venues.map((venue) => {
        const lines = last.buckets.filter((b) => b.venue === venue).flatMap((b) => b.lines);
        // Revenue is what was ordered: a NEW line is still in the basket (an open tab's next round), a CANCELLED one
        // was taken back; the box's own `total` counts the same lines (docs/orders.md).
        const kept = lines.filter((l) => (l.status ?? 'ORDERED') === 'ORDERED');
        return {
          m,
          venue,
          day,
          hour,
          sale: SALE.includes(last.status),
          status: last.status,
          lines: kept,
          revenue: kept.reduce((s, l) => s + minor(l.price) * l.quantity, 0),
          kitchen:
            orderedAt && readyAt ? Math.max(0, Math.round((Date.parse(readyAt) - Date.parse(orderedAt)) / 1000)) : null,
        };
      });
    });
}
type Fact = ReturnType<typeof factsOf>[number];

export interface Range {
  from: string;
  to: string;
  venueId?: string;
}
const inRange = (f: Fact, r: Range) => f.day >= r.from && f.day <= r.to && (!r.venueId || f.venue === r.venueId);

export function expectedSales(facts: Fact[], r: Range, by: 'day' | 'hour', venueName: (id: string) => string) {
  const groups = new Map<string, { venueId: string; period: string; orders: number; revenue: number }>();
  for (const f of facts.filter((x) => x.sale && inRange(x, r))) {
    const period = by === 'day' ? f.day : `${f.day}T${String(f.hour).padStart(2, '0')}`;
    const g = groups.get(`${period}|${f.venue}`) ?? { venueId: f.venue, period, orders: 0, revenue: 0 };
    g.orders += 1;
    g.revenue += f.revenue;
    groups.set(`${period}|${f.venue}`, g);
  }
  const rows = [...groups.values()]
    .map((g) => ({
      venueId: g.venueId,
      venueName: venueName(g.venueId),
      period: g.period,
      ...totals(g.orders, g.revenue),
    }))
    .sort((a, b) => a.period.localeCompare(b.period) || a.venueName.localeCompare(b.venueName));
  const orders = [...groups.values()].reduce((s, g) => s + g.orders, 0);
  const revenue = [...groups.values()].reduce((s, g) => s + g.revenue, 0);
  return { from: r.from, to: r.to, by, rows, totals: totals(orders, revenue) };
}

export function expectedProducts(facts: Fact[], r: Range, limit: number) {
  const byProduct = new Map<string, { quantity: number; revenue: number; name: string; at: string }>();
  for (const f of facts.filter((x) => x.sale && inRange(x, r)))
    for (const l of f.lines) {
      const p = byProduct.get(l.productId) ?? { quantity: 0, revenue: 0, name: l.name, at: f.m.created };
      p.quantity += l.quantity;
      p.revenue += minor(l.price) * l.quantity;
      byProduct.set(l.productId, p);
    }
  // The name as last sold: the newest order (of any range) that sold the product names it.
  for (const f of facts)
    for (const l of f.lines) {
      const p = byProduct.get(l.productId);
      if (p && f.m.created >= p.at) Object.assign(p, { name: l.name, at: f.m.created });
    }
  const rows = [...byProduct.entries()]
    .sort(([a, x], [b, y]) => y.revenue - x.revenue || a.localeCompare(b))
    .slice(0, limit)
    .map(([productId, p]) => ({ productId, name: p.name, quantity: p.quantity, revenue: money(p.revenue) }));
  return { from: r.from, to: r.to, rows };
}

export function expectedChannels(facts: Fact[], r: Range) {
  const byType = new Map<string, { orders: number; revenue: number }>();
  for (const f of facts.filter((x) => x.sale && inRange(x, r))) {
    const t = byType.get(f.m.orderType) ?? { orders: 0, revenue: 0 };
    t.orders += 1;
    t.revenue += f.revenue;
    byType.set(f.m.orderType, t);
  }
  const rows = [...byType.entries()]
    .sort(([a, x], [b, y]) => y.orders - x.orders || a.localeCompare(b))
    .map(([orderType, t]) => ({ orderType, ...totals(t.orders, t.revenue) }));
  return { from: r.from, to: r.to, rows };
}

export function expectedKitchen(facts: Fact[], r: Range, venueName: (id: string) => string) {
  const byVenue = new Map<string, number[]>();
  for (const f of facts.filter((x) => x.kitchen !== null && inRange(x, r)))
    byVenue.set(f.venue, [...(byVenue.get(f.venue) ?? []), f.kitchen!]);
  const rows = [...byVenue.entries()]
    .map(([venueId, s]) => ({
      venueId,
      venueName: venueName(venueId),
      orders: s.length,
      averageSeconds: Math.round(s.reduce((a, b) => a + b, 0) / s.length),
      maxSeconds: Math.max(...s),
    }))
    .sort((a, b) => a.venueName.localeCompare(b.venueName));
  return { from: r.from, to: r.to, rows };
}
