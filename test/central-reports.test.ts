import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import demo from '../native-config/demo.json';
import { CENTRAL_DEMO, startTestCentral, type TestCentral } from './support/central.js';
import {
  appendVersion,
  expectedChannels,
  expectedKitchen,
  expectedProducts,
  expectedSales,
  factsOf,
  type Line,
  type Made,
  type Range,
  warsaw,
} from './support/report-orders.js';
import { enrolledDevice, type SimDevice } from './support/sim-device.js';

// Headquarters' reports (docs/sync.md "HQ reports and order search") against a real central fed by signed sync
// batches: every report must equal the same figure computed in JS over the orders this test made
// (test/support/report-orders.ts), through a replayed batch, batches sent out of order, a sale cancelled later,
// orders over two venues, and the hours around Warsaw's midnight and its switch to summer time.
const [V1, V2, V3] = CENTRAL_DEMO.venues as [string, string, string];
const names = new Map(demo.tenants[0]!.venues.map((v) => [v.id, v.name]));
const venueName = (id: string) => names.get(id)!;

let central: TestCentral;
let token: string;
let a: SimDevice;
let b: SimDevice;
const made: Made[] = [];

beforeAll(async () => {
  central = await startTestCentral();
  token = await central.hqToken();
  a = await enrolledDevice(central, V1);
  b = await enrolledDevice(central, V2);
}, 60_000);
afterAll(() => central?.stop());

async function get(path: string): Promise<{ status: number; body: any }> {
  const res = await fetch(central.url(path), { headers: { authorization: `Bearer ${token}` } });
  return { status: res.status, body: await res.json() };
}
const ok = async (path: string) => {
  const r = await get(path);
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.body;
};

const P = {
  pierogi: (quantity: number, status?: Line['status']): Line => ({
    productId: 'pierogi',
    name: 'Pierogi ruskie',
    quantity,
    price: '24.50',
    status,
  }),
  zurek: (quantity: number): Line => ({ productId: 'zurek', name: 'Żurek', quantity, price: '19.99' }),
  piwo: (quantity: number, name = 'Piwo'): Line => ({ productId: 'piwo', name, quantity, price: '12.00' }),
};

let n = 0;
/** An order whose versions move through `statuses`, one minute apart from `created` (plus `readyAfterS` to READY). */
function order(
  device: SimDevice,
  created: string,
  statuses: string[],
  buckets: Made['versions'][number]['buckets'],
  over: Partial<Pick<Made, 'orderType' | 'source' | 'contact'>> & {
    readyAfterS?: number;
    last?: Made['versions'][number]['buckets'];
  } = {},
): Made {
  const t0 = Date.parse(created);
  let at = t0;
  const versions = statuses.map((status, i) => {
    at += status === 'READY' ? (over.readyAfterS ?? 300) * 1000 : 60_000;
    const last = i === statuses.length - 1 && over.last;
    return { status, confirmedAt: new Date(i === 0 ? t0 : at).toISOString(), buckets: last || buckets };
  });
  const m: Made = {
    id: `rep-${++n}-${device.deviceId.slice(0, 4)}`,
    device,
    orderType: over.orderType ?? 'TAKE_AWAY',
    source: over.source ?? 'KIOSK',
    created,
    contact: over.contact ?? null,
    versions,
    sent: 0,
  };
  made.push(m);
  return m;
}

/** Appends the versions of `orders` up to `upto` (all by default) to their devices' outboxes. */
function queue(orders: Made[], upto?: number): void {
  for (const m of orders) {
    const to = Math.min(upto ?? m.versions.length, m.versions.length);
    for (let i = m.sent; i < to; i++) appendVersion(CENTRAL_DEMO.tenant, m, i);
    m.sent = Math.max(m.sent, to);
  }
}

async function sendAll(d: SimDevice, from: number): Promise<void> {
  const res = await d.send(from, d.lastSeq);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  expect(res.body.deadLetters).toEqual([]);
}

const reportPaths = (r: Range) => {
  const q = `from=${r.from}&to=${r.to}${r.venueId ? `&venueId=${r.venueId}` : ''}`;
  return { q, r };
};

async function expectReports(ranges: Range[]): Promise<void> {
  const facts = factsOf(made);
  for (const range of ranges) {
    const { q, r } = reportPaths(range);
    expect(await ok(`/hq-api/api/reports/sales?${q}`), `sales ${q}`).toEqual(expectedSales(facts, r, 'day', venueName));
    expect(await ok(`/hq-api/api/reports/sales?${q}&by=hour`), `hourly ${q}`).toEqual(
      expectedSales(facts, r, 'hour', venueName),
    );
    expect(await ok(`/hq-api/api/reports/products?${q}&limit=2`), `products ${q}`).toEqual(
      expectedProducts(facts, r, 2),
    );
    expect(await ok(`/hq-api/api/reports/products?${q}`), `products ${q}`).toEqual(expectedProducts(facts, r, 20));
    expect(await ok(`/hq-api/api/reports/channels?${q}`), `channels ${q}`).toEqual(expectedChannels(facts, r));
    expect(await ok(`/hq-api/api/reports/kitchen?${q}`), `kitchen ${q}`).toEqual(expectedKitchen(facts, r, venueName));
  }
}

const RANGES: Range[] = [
  { from: '2026-03-28', to: '2026-03-29' },
  { from: '2026-03-29', to: '2026-03-29' },
  { from: '2026-03-28', to: '2026-03-28', venueId: V2 },
  { from: '2026-03-01', to: '2026-03-31', venueId: V1 },
];

/**
 * The orders most tests read, made and sent once, whichever test comes first (tests run in random order):
 * device b sends its second half first (409, nothing applied), then all in order; device a sends all, then all
 * again (a replay).
 */
let seeding: Promise<void> | undefined;
const seeded = () => (seeding ??= seed());
async function seed(): Promise<void> {
  const ann = { name: 'Anna Kowalska', phone: '+48 600 100 200', email: 'Anna@Example.PL' };
  // 23:59:59 and 00:00:00 in Warsaw (UTC+1), then 01:59 and 03:00 across the switch to summer time.
  order(
    a,
    '2026-03-28T22:59:59.000Z',
    ['NEW', 'ORDERED', 'READY', 'COMPLETED'],
    [{ venue: V1, lines: [P.pierogi(2), P.zurek(1)] }],
    {
      contact: ann,
      readyAfterS: 420,
    },
  );
  order(a, '2026-03-28T23:00:00.000Z', ['NEW', 'ORDERED', 'COMPLETED'], [{ venue: V1, lines: [P.piwo(3)] }], {
    orderType: 'DINE_IN',
    source: 'WAITER',
  });
  order(
    a,
    '2026-03-29T00:59:00.000Z',
    ['NEW', 'ORDERED', 'READY'],
    [{ venue: V1, lines: [P.zurek(2), P.pierogi(1, 'CANCELLED'), P.pierogi(2, 'NEW')] }],
    {
      readyAfterS: 95,
    },
  );
  order(a, '2026-03-29T01:00:00.000Z', ['NEW'], [{ venue: V1, lines: [P.pierogi(5)] }]); // a basket: no sale
  // One order over two venues from each device: its revenue split by venue, its first venue the first bucket's.
  order(
    a,
    '2026-03-28T11:15:00.000Z',
    ['NEW', 'ORDERED', 'READY'],
    [
      { venue: V1, lines: [P.pierogi(1)] },
      { venue: V2, lines: [P.piwo(2, 'Piwo jasne'), P.zurek(1)] },
    ],
    { orderType: 'DELIVERY', contact: { name: 'Jan Nowak', phone: '+48 500 300 400' }, readyAfterS: 610 },
  );
  order(
    b,
    '2026-03-28T18:30:00.000Z',
    ['NEW', 'ORDERED'],
    [
      { venue: V2, lines: [P.zurek(4)] },
      { venue: V3, lines: [P.piwo(1)] },
    ],
    { orderType: 'DELIVERY', source: 'PHONE', contact: { name: 'Zofia Kowalczyk' } },
  );
  order(
    b,
    '2026-03-28T19:00:00.000Z',
    ['NEW', 'ORDERED', 'READY', 'COMPLETED'],
    [{ venue: V2, lines: [P.pierogi(1)] }],
    {
      readyAfterS: 1200,
    },
  );
  queue(made);
  const half = Math.ceil(b.lastSeq / 2);
  expect((await b.send(half + 1, b.lastSeq)).status).toBe(409);
  await sendAll(b, 1);
  await sendAll(a, 1);
  const replay = await a.send(1, a.lastSeq);
  expect(replay.status).toBe(200);
}

describe('reports equal a computation over the orders made', () => {
  test('through Warsaw midnight and summer time, two venues, a replay and batches out of order', async () => {
    await seeded();
    await expectReports(RANGES);
    expect(factsOf(made).filter((f) => f.sale).length).toBeGreaterThan(5);
  });

  test('a sale cancelled later leaves sales, products and channels; its kitchen time stays (it reached READY)', async () => {
    await seeded();
    const sale = order(
      a,
      '2026-03-28T20:00:00.000Z',
      ['NEW', 'ORDERED', 'READY', 'CANCELLED'],
      [{ venue: V1, lines: [P.pierogi(10)] }],
      { readyAfterS: 3600, last: [{ venue: V1, lines: [P.pierogi(10, 'CANCELLED')] }] },
    );
    const from = a.lastSeq + 1;
    queue([sale], 3);
    await sendAll(a, from);
    // While READY it is the day's biggest sale and its slowest kitchen time.
    const before = await ok('/hq-api/api/reports/kitchen?from=2026-03-28&to=2026-03-28');
    expect(before.rows.find((r: any) => r.venueId === V1).maxSeconds).toBe(3600);
    await expectReports(RANGES);
    const salesV1 = `/hq-api/api/reports/sales?from=2026-03-28&to=2026-03-28&venueId=${V1}`;
    const whileSold = await ok(salesV1);
    const next = a.lastSeq + 1;
    queue([sale]);
    await sendAll(a, next);
    await expectReports(RANGES);
    const after = await ok(salesV1);
    expect(after.totals.orders).toBe(whileSold.totals.orders - 1);
    expect(Number(after.totals.revenue)).toBeCloseTo(Number(whileSold.totals.revenue) - 245, 2);
  });
});

describe('the order search', () => {
  const ids = async (query: string) => {
    const all: string[] = [];
    let after: string | null = null;
    do {
      const page: any = await ok(`/hq-api/api/orders?limit=2&${query}${after ? `&after=${after}` : ''}`);
      all.push(...page.items.map((o: any) => o.id));
      after = page.next;
    } while (after);
    return all;
  };
  const newestFirst = (list: Made[]) =>
    [...list].sort((x, y) => y.created.localeCompare(x.created) || y.id.localeCompare(x.id)).map((m) => m.id);
  const last = (m: Made) => m.versions[m.sent - 1]!;

  test('filters by venue, status, dates, source, device and contact text, page by page', async () => {
    await seeded();
    expect(await ids('q=KOWAL')).toEqual(newestFirst(made.filter((m) => /kowal/i.test(m.contact?.name ?? ''))));
    expect(await ids('q=example.pl')).toEqual(newestFirst(made.filter((m) => m.contact?.email === 'Anna@Example.PL')));
    expect(await ids('q=600%20100')).toHaveLength(1);
    expect(await ids('q=a%25b')).toEqual([]); // % is text, not a wildcard
    expect(await ids('status=CANCELLED')).toEqual(newestFirst(made.filter((m) => last(m).status === 'CANCELLED')));
    expect(await ids(`venueId=${V2}`)).toEqual(
      newestFirst(made.filter((m) => last(m).buckets.some((x) => x.venue === V2))),
    );
    expect(await ids(`venueId=${V1}&from=2026-03-29&to=2026-03-29`)).toEqual(
      newestFirst(made.filter((m) => last(m).buckets[0]!.venue === V1 && warsaw(m.created).day === '2026-03-29')),
    );
    expect(await ids('to=2026-03-28')).toEqual(newestFirst(made.filter((m) => warsaw(m.created).day <= '2026-03-28')));
    expect(await ids('source=PHONE')).toEqual(newestFirst(made.filter((m) => m.source === 'PHONE')));
    expect(await ids(`deviceId=${b.deviceId}&status=COMPLETED`)).toEqual(
      newestFirst(made.filter((m) => m.device === b && last(m).status === 'COMPLETED')),
    );
    const page = await ok('/hq-api/api/orders?q=anna');
    expect(page.items[0]).toMatchObject({
      contact: { name: 'Anna Kowalska', phone: '+48 600 100 200', email: 'Anna@Example.PL' },
      deviceId: a.deviceId,
      version: 4,
    });
    const none = await ok(`/hq-api/api/orders?source=KIOSK&status=NEW`);
    expect(none.items.map((o: any) => o.contact)).toEqual(none.items.map(() => null));
  });
});

describe('bad input is a 400 naming the parameter', () => {
  const bad: [string, string][] = [
    ['/hq-api/api/reports/sales?from=2026-03-02&to=2026-03-01', 'to'],
    ['/hq-api/api/reports/sales?from=2025-01-01&to=2026-01-02', 'to'],
    ['/hq-api/api/reports/sales?from=2026-03-01&to=2026-04-02&by=hour', 'to'],
    ['/hq-api/api/reports/sales?from=2026-02-30&to=2026-03-01', 'from'],
    ['/hq-api/api/reports/sales?to=2026-03-01', 'from'],
    ['/hq-api/api/reports/sales?from=2026-03-01', 'to'],
    ['/hq-api/api/reports/sales?from=2026-03-01&to=2026-03-01&by=week', 'by'],
    ['/hq-api/api/reports/products?from=2026-03-01&to=2026-03-01&limit=0', 'limit'],
    ['/hq-api/api/reports/products?from=2026-03-01&to=2026-03-01&limit=201', 'limit'],
    ['/hq-api/api/reports/channels?from=20260301&to=2026-03-01', 'from'],
    ['/hq-api/api/reports/kitchen?from=2026-03-01&to=2026-3-1', 'to'],
    ['/hq-api/api/reports/kitchen?from=2026-03-01&to=2026-03-01&venueId=', 'venueId'],
    ['/hq-api/api/orders?status=CLOSED', 'status'],
    ['/hq-api/api/orders?q=a', 'q'],
    [`/hq-api/api/orders?q=${'x'.repeat(101)}`, 'q'],
    ['/hq-api/api/orders?from=yesterday', 'from'],
    ['/hq-api/api/orders?from=2026-03-02&to=2026-03-01', 'to'],
    ['/hq-api/api/orders?source=', 'source'],
  ];
  test.each(bad)('%s', async (path, param) => {
    const r = await get(path);
    expect(r.status).toBe(400);
    expect(r.body.codes[0]).toMatchObject({ code: 'invalidField', args: [param] });
  });

  test('an unknown venue is a 404; no token is a 401', async () => {
    for (const report of ['sales', 'products', 'channels', 'kitchen']) {
      const r = await get(`/hq-api/api/reports/${report}?from=2026-03-01&to=2026-03-01&venueId=nowhere`);
      expect(r.status, report).toBe(404);
      expect(r.body.codes[0].code).toBe('notFound');
    }
    expect((await fetch(central.url('/hq-api/api/dashboard'))).status).toBe(401);
  });
});

describe('the dashboard', () => {
  test("today's sales per venue, orders per hour and the fleet", async () => {
    await seeded();
    const now = Date.now();
    const today = made.length;
    order(
      a,
      new Date(now - 30 * 60_000).toISOString(),
      ['NEW', 'ORDERED', 'READY'],
      [{ venue: V1, lines: [P.zurek(2)] }],
      {
        readyAfterS: 200,
      },
    );
    order(
      b,
      new Date(now - 20 * 60_000).toISOString(),
      ['NEW', 'ORDERED', 'COMPLETED'],
      [{ venue: V2, lines: [P.piwo(1)] }],
    );
    const fromA = a.lastSeq + 1;
    const fromB = b.lastSeq + 1;
    queue(made.slice(today));
    await sendAll(a, fromA);
    await sendAll(b, fromB);
    // A device never heard from, one behind with a rolled-back update, one with a dead letter.
    const silent = await enrolledDevice(central, V3);
    const behind = await enrolledDevice(central, V3);
    const report = {
      version: '0.1.0',
      arch: 'x64',
      node: '24.21.0',
      state: 'rolledBack',
      target: '0.2.0',
      reason: 'gate',
      since: now,
    };
    // Its oldest unsent event is ten minutes old by its own clock (which runs with the central's here).
    const oldestMs = Date.now() - 600_000;
    expect((await behind.hello({ pendingSeq: 7, update: report, oldestPendingMs: oldestMs })).status).toBe(200);
    b.append('no.such.kind', 'x', {});
    const poison = await b.send(b.lastSeq, b.lastSeq);
    expect(poison.body.deadLetters).toHaveLength(1);

    const d = await ok('/hq-api/api/dashboard');
    const local = warsaw(d.generatedAt).day;
    expect(d.today).toBe(local);
    const monday = new Date(`${local}T00:00:00Z`);
    monday.setUTCDate(monday.getUTCDate() - ((monday.getUTCDay() + 6) % 7));
    expect(d.weekFrom).toBe(monday.toISOString().slice(0, 10));
    const facts = factsOf(made);
    for (const v of d.venues) {
      const day = expectedSales(facts, { from: local, to: local, venueId: v.venueId }, 'day', venueName).totals;
      const week = expectedSales(facts, { from: d.weekFrom, to: local, venueId: v.venueId }, 'day', venueName).totals;
      expect(v.today).toMatchObject(day);
      expect(v.week).toMatchObject(week);
      const kitchen = expectedKitchen(facts, { from: local, to: local, venueId: v.venueId }, venueName).rows[0];
      expect(v.today.kitchenAverageSeconds).toBe(kitchen?.averageSeconds ?? null);
    }
    expect(d.venues.map((v: any) => v.venueName)).toEqual([...names.values()].sort((x, y) => x.localeCompare(y)));
    const hours = Array.from({ length: 24 }, (_, hour) => ({
      hour,
      orders: facts.filter((f) => f.sale && f.day === local && f.hour === hour).length,
    }));
    expect(d.ordersPerHour).toEqual(hours);
    expect(d.fleet).toMatchObject({ devices: 4, online: 3 });
    expect(d.fleet.offline).toEqual([{ deviceId: silent.deviceId, name: 'sim', venueId: V3, lastContactAt: null }]);
    expect(d.fleet.lagging).toEqual([
      { deviceId: behind.deviceId, name: 'sim', venueId: V3, lagEvents: 7, oldestPendingAt: expect.any(String) },
    ]);
    // On the central's clock: the box's time less the offset its hello showed (a second or so here).
    expect(Math.abs(Date.parse(d.fleet.lagging[0].oldestPendingAt) - oldestMs)).toBeLessThan(5000);
    expect(d.fleet.deadLetters).toEqual([{ deviceId: b.deviceId, name: 'sim', venueId: V2, count: 1 }]);
    expect(d.fleet.rolledBack).toEqual([
      { deviceId: behind.deviceId, name: 'sim', venueId: V3, version: '0.2.0', reason: 'gate' },
    ]);
  });
});
