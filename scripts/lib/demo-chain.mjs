// A week of the demo chain at a running central (README "Headquarters console"), used by scripts/demo-chain.mjs
// and scripts/screenshots-hq.mjs: one simulated box per demo venue, enrolled with a one-time code and speaking the
// real sync protocol (signed hello, signed batches: the tests' SimDevice), sends the orders a small restaurant takes
// in the last `days` days and today so far: lunch and dinner peaks, take-away, delivery (with a contact), dine-in, a
// few cancelled, each order in the versions a box sends (new, submit, ready, complete). Seeded, so two runs tell the
// same story (with new ids).
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { root } from './run.mjs';
import { loadSimDevice } from './sim-device.mjs';

const demo = JSON.parse(readFileSync(`${root}native-config/demo.json`, 'utf8')).tenants[0];
const products = (node, category = '') =>
  node.kind === 'svc/product'
    ? [{ ...node, category }]
    : node.items.flatMap((child) => products(child, node.id === 'rootcat' ? child.id : category));
const MENUS = new Map(demo.menus.map((m) => [m.id, products(m.root)]));

/** mulberry32: a small seeded generator, so the demo's figures are the same on every run. */
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
let random = rng(1);
const pick = (list) => list[Math.floor(random() * list.length)];
const minor = (price) => Math.round(Number(price) * 100);
const money = (m) => (m / 100).toFixed(2);

/**
 * Minutes after local midnight an order is made: lunch (12-14) and dinner (18-20) peaks over a day of 11:00-22:00,
 * and one order in ten at any hour (the demo venues are open around the clock).
 */
function orderMinute() {
  const r = random();
  if (r < 0.1) return Math.floor(random() * 24 * 60);
  const peak = r < 0.45 ? 13 * 60 : r < 0.8 ? 19 * 60 : 11 * 60 + random() * 11 * 60;
  return Math.max(11 * 60, Math.min(22 * 60 - 1, Math.round(peak + (random() - 0.5) * 150)));
}

const NAMES = ['Anna Nowak', 'Jan Kowalski', 'Maria Wiśniewska', 'Piotr Zieliński', 'Ewa Wójcik', 'Tomasz Lewandowski'];

/** The versions a box sends for one order (docs/sync.md "Sync to the central node"): each the whole Order. */
function orderVersions(venue, createdMs, nowMs) {
  const menu = MENUS.get(venue.menu);
  const orderType = pick(['TAKE_AWAY', 'TAKE_AWAY', 'DINE_IN', 'DINE_IN', 'DELIVERY']);
  const id = randomUUID();
  const userId = randomUUID();
  const iso = (ms) => new Date(ms).toISOString();
  const lines = Array.from({ length: 1 + Math.floor(random() * 4) }, () => {
    const p = pick(menu);
    return {
      id: randomUUID(),
      creator: userId,
      created: iso(createdMs),
      updated: iso(createdMs),
      source: 'box',
      quantity: 1 + Math.floor(random() * (p.category === 'drinks' ? 3 : 2)),
      price: p.price,
      productId: p.id,
      product: { literals: p.details.literals, extra: { category: p.category } },
      status: 'NEW',
      hash: randomUUID().slice(0, 8),
    };
  });
  const contact =
    orderType === 'DELIVERY'
      ? { name: pick(NAMES), phone: `+48 600 ${100 + Math.floor(random() * 900)} ${100 + Math.floor(random() * 900)}` }
      : null;
  const steps = [{ kind: 'new', status: 'NEW', at: createdMs }];
  let at = createdMs + 30_000 + random() * 90_000;
  steps.push({ kind: 'submit', status: 'ORDERED', at });
  if (random() < 0.06) steps.push({ kind: 'cancel', status: 'CANCELLED', at: at + 120_000 });
  else {
    at += (6 + random() * 22) * 60_000; // the kitchen: 6 to 28 minutes
    steps.push({ kind: 'ready', status: 'READY', at });
    steps.push({ kind: 'complete', status: 'COMPLETED', at: at + (1 + random() * 8) * 60_000 });
  }
  return steps
    .filter((s) => s.at <= nowMs)
    .map((s, i) => {
      const lineStatus = s.status === 'NEW' ? 'NEW' : s.status === 'CANCELLED' ? 'CANCELLED' : 'ORDERED';
      const orderLines = lines.map((l) => ({ ...l, status: lineStatus, updated: iso(s.at) }));
      // The box's fields: `total` the ORDERED lines, `editTotal` the NEW ones still in the basket (docs/orders.md).
      const value = lines.reduce((sum, l) => sum + minor(l.price) * l.quantity, 0);
      const total = lineStatus === 'ORDERED' ? value : 0;
      const editTotal = lineStatus === 'NEW' ? value : 0;
      return {
        at: s.at,
        body: {
          version: i + 1,
          command: {
            correlationId: randomUUID(),
            kind: s.kind,
            userId,
            staff: s.kind !== 'new' && s.kind !== 'submit',
            confirmedAt: iso(s.at),
          },
          order: {
            tenant: demo.id,
            id,
            created: iso(createdMs),
            lastChanged: iso(s.at),
            source: 'box',
            users: [{ userId, roles: ['OWNER'] }],
            orderType,
            total: money(total),
            editTotal: money(editTotal),
            status: s.status,
            claimCode: String(100000 + Math.floor(random() * 900000)),
            buckets: [
              {
                venue: venue.id,
                name: venue.name,
                menu: venue.menu,
                lines: orderLines,
                extra: { minDeliveryMinutes: '15', minDeliveryTime: '00:15:00', minOrderValue: '0.00' },
              },
            ],
            closed: s.status === 'COMPLETED' || s.status === 'CANCELLED',
            completed: s.status === 'COMPLETED',
          },
          detail: { contact, extra: null, rounds: 1, lineRounds: {} },
        },
      };
    });
}

const GOODS = [
  ['maka', 'kg', 25],
  ['ziemniaki', 'kg', 40],
  ['mleko', 'l', 20],
  ['smietana', 'l', 6],
  ['kapusta', 'kg', 15],
  ['wieprzowina', 'kg', 12],
  ['jaja', 'szt', 120],
  ['piwo-keg', 'l', 50],
];

/** A morning delivery (PZ) at the venue's warehouse, as a box's stock.document event with its ledger rows. */
function delivery(venue, atMs, n) {
  const items = GOODS.filter(() => random() < 0.6).map(([id, unit, qty]) => ({
    id,
    unit,
    qty: Math.round(qty * (0.5 + random())),
  }));
  if (items.length === 0) items.push({ id: 'maka', unit: 'kg', qty: 25 });
  const id = randomUUID();
  const day = new Date(atMs).toISOString().slice(0, 10).replaceAll('-', '');
  return {
    at: atMs,
    kind: 'stock.document',
    aggregate: id,
    body: {
      document: {
        id,
        kind: 'PZ',
        warehouse: venue.warehouse,
        number: `PZ/${day}/${n}`,
        user: randomUUID(),
        created: new Date(atMs).toISOString(),
        items,
        unlockItems: false,
        extra: { supplier: pick(['Hurtownia Smak', 'Gospodarstwo Nowak', 'Browar Lokalny']) },
      },
      ledger: items.map((item, i) => [venue.warehouse, i + 1, item.id, item.unit, item.qty * 1_000_000]),
    },
  };
}

/** Local midnight in Warsaw (the demo venues' zone) `daysAgo` days back, as epoch ms. */
function warsawMidnight(daysAgo, nowMs) {
  const day = new Intl.DateTimeFormat('en-CA', { timeZone: 'Europe/Warsaw' }).format(
    new Date(nowMs - daysAgo * 86_400_000),
  );
  const utcGuess = Date.parse(`${day}T00:00:00Z`);
  const offsetH = Number(
    new Intl.DateTimeFormat('en-GB', { timeZone: 'Europe/Warsaw', hour: '2-digit', hourCycle: 'h23' }).format(
      new Date(utcGuess),
    ),
  );
  return utcGuess - offsetH * 3_600_000;
}

/**
 * Enrols one simulated box per demo venue at `central` (codes from `venue-box central enrol` on `dataDir`) and sends
 * each its orders; resolves with the number of events sent.
 */
export async function fillDemoChain({ central, dataDir, days = 7, seed = 1, log = console.log }) {
  random = rng(seed);
  const DAYS = Math.min(60, Math.max(0, days));
  const { SimDevice } = await loadSimDevice('demo-sim-device');
  const nowMs = Date.now();
  let sent = 0;
  for (const [n, venue] of demo.venues.entries()) {
    const code = execFileSync(
      process.execPath,
      ['dist/main.cjs', 'central', 'enrol', '--tenant', demo.id, '--venue', venue.id, '--data-dir', resolve(dataDir)],
      { encoding: 'utf8', cwd: root },
    )
      .trim()
      .split('\n')
      .pop();
    const device = new SimDevice(central);
    const enrolled = await device.enrol(code, `demo-box-${n + 1}`);
    if (enrolled.status !== 201) throw new Error(`enrol: ${enrolled.status} ${JSON.stringify(enrolled.body)}`);
    const events = [];
    for (let daysAgo = DAYS; daysAgo >= 0; daysAgo--) {
      const midnight = warsawMidnight(daysAgo, nowMs);
      if (midnight + 8 * 3_600_000 <= nowMs) events.push(delivery(venue, midnight + 8 * 3_600_000, n + 1));
      const count = Math.round((25 + random() * 30) * (n === 0 ? 1.4 : 1));
      for (let i = 0; i < count; i++) {
        const createdMs = midnight + orderMinute() * 60_000;
        if (createdMs > nowMs) continue;
        for (const v of orderVersions(venue, createdMs, nowMs))
          events.push({ ...v, kind: 'order.changed', aggregate: v.body.order.id });
      }
    }
    events.sort((a, b) => a.at - b.at);
    for (const e of events) {
      device.clockMs = e.at;
      device.append(e.kind, e.aggregate, e.body);
    }
    device.clockMs = nowMs;
    await device.drain(1, 200);
    const hello = await device.hello({ version: '0.1.0' });
    if (hello.status !== 200) throw new Error(`hello: ${hello.status} ${JSON.stringify(hello.body)}`);
    sent += events.length;
    log(`${venue.name}: device ${device.deviceId}, ${events.length} events sent (orders and deliveries)`);
  }
  return sent;
}
