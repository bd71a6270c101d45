import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import demo from '../../../../native-config/demo.json';
import { envelopeText } from '../../../shared/sync-protocol.js';
import { openEmbedded, type EmbeddedDatabase } from '../../db/embedded.js';
import { migrate } from '../../db/migrate.js';
import { createPool, inTransaction, type Pool, type Queryable } from '../../db/pool.js';
import { provision } from '../tenants/provision.js';
import { factInputs } from './facts.js';
import { flushOrders, parseEvent, projectEvent } from './project.js';
import type { PendingOrder } from './repo.js';

// The rollups stay equal to a GROUP BY over the facts whatever the events do: versions one by one or a batch at
// once, a replay, sales cancelled, kitchen maxima removed, and batches of two devices of one venue committing side
// by side (docs/sync.md "HQ reports and order search").
const tenant = demo.tenants[0]!.id;
const [V1, V2] = demo.tenants[0]!.venues.map((v) => v.id) as [string, string];
let pg: EmbeddedDatabase;
let pool: Pool;
beforeAll(async () => {
  pg = await openEmbedded(mkdtempSync(join(tmpdir(), 'vb-central-facts-')), 'serve');
  pool = createPool(pg.url, 4);
  await migrate(pool);
  await provision(pool, 'demo', demo, { demo: true });
});
afterAll(async () => {
  await pool.end();
  await pg.stop();
});

/** A small deterministic generator (mulberry32), so a failure repeats. */
function random(seed: number) {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const STATUSES = ['NEW', 'ORDERED', 'READY', 'ORDERED', 'READY', 'COMPLETED', 'CANCELLED'];
const seqs = new Map<string, number>();

/** Version `v` of order `id` as its device's event text, with a status and lines drawn from `rnd`. */
function event(device: string, id: string, v: number, rnd: () => number, venues: string[]) {
  const status = STATUSES[Math.floor(rnd() * STATUSES.length)]!;
  const created = new Date(Date.UTC(2026, 2, 28, 20) + Math.floor(rnd() * 6) * 3_600_000).toISOString();
  const buckets = venues.map((venue) => ({
    venue,
    lines: Array.from({ length: 1 + Math.floor(rnd() * 3) }, (_, i) => ({
      productId: `p${Math.floor(rnd() * 4)}`,
      quantity: 1 + Math.floor(rnd() * 3),
      price: `${1 + Math.floor(rnd() * 30)}.${Math.floor(rnd() * 100)
        .toString()
        .padStart(2, '0')}`,
      status: status === 'CANCELLED' || rnd() < 0.1 ? 'CANCELLED' : 'ORDERED',
      product: { details: { literals: { name: `Product ${i}` } } },
    })),
  }));
  const body = {
    version: v,
    command: {
      correlationId: randomUUID(),
      kind: 'k',
      userId: 'u',
      staff: true,
      confirmedAt: new Date(Date.parse(created) + v * Math.floor(rnd() * 900_000)).toISOString(),
    },
    order: { id, tenant, status, created, orderType: rnd() < 0.5 ? 'DINE_IN' : 'TAKE_AWAY', buckets },
    detail: { contact: rnd() < 0.3 ? { name: 'Ola' } : null, extra: null, rounds: 1, lineRounds: {} },
  };
  const seq = (seqs.get(device) ?? 0) + 1;
  seqs.set(device, seq);
  const text = envelopeText(
    { eventId: randomUUID(), tenant, aggregate: id, kind: 'order.changed', boxTime: created },
    JSON.stringify(body),
  );
  return { device, seq, text, parsed: parseEvent(text, tenant) };
}
type Event = ReturnType<typeof event>;

/** A batch of one device as the ingest projects it: the fast path (one flush), or one event at a time. */
async function project(db: Queryable, events: Event[], fast: boolean): Promise<void> {
  const device = events[0]!.device;
  const orders: PendingOrder[] = [];
  for (const e of events)
    await projectEvent(
      db,
      { tenantId: tenant, deviceId: device, seq: e.seq },
      e.parsed,
      undefined,
      fast ? orders : undefined,
    );
  if (!fast) return;
  // As the ingest does before it projects a batch: the envelopes stored, where flushOrders reads their JSON.
  await db.query(
    `INSERT INTO sync_events (tenant_id, device_id, seq, epoch, envelope, chain_hash)
     SELECT $1, $2, s, 1, e, 'x' FROM unnest($3::bigint[], $4::text[]) AS t(s, e)`,
    [tenant, device, events.map((e) => e.seq), events.map((e) => e.text)],
  );
  await flushOrders(db, tenant, device, orders);
}

const rows = async (sql: string) => (await pool.query(sql, [tenant])).rows;

/** Each rollup's non-zero rows, and the same computed from the facts. */
async function expectRollupsEqualFacts(): Promise<void> {
  const pairs: [string, string][] = [
    [
      `SELECT venue_id, local_day, order_type, orders, revenue_minor FROM sales_daily WHERE tenant_id = $1 AND orders <> 0`,
      `SELECT venue_id, local_day, order_type, count(*)::bigint AS orders, sum(total_minor)::bigint AS revenue_minor
       FROM order_facts WHERE tenant_id = $1 AND sale GROUP BY 1, 2, 3`,
    ],
    [
      `SELECT venue_id, local_day, local_hour, orders, revenue_minor FROM sales_hourly WHERE tenant_id = $1 AND orders <> 0`,
      `SELECT venue_id, local_day, local_hour, count(*)::bigint AS orders, sum(total_minor)::bigint AS revenue_minor
       FROM order_facts WHERE tenant_id = $1 AND sale GROUP BY 1, 2, 3`,
    ],
    [
      `SELECT venue_id, local_day, orders, seconds_sum, seconds_max FROM kitchen_daily WHERE tenant_id = $1 AND orders <> 0`,
      `SELECT venue_id, local_day, count(*)::bigint AS orders, sum(kitchen_seconds)::bigint AS seconds_sum,
         max(kitchen_seconds) AS seconds_max FROM order_facts WHERE tenant_id = $1 AND kitchen_seconds IS NOT NULL GROUP BY 1, 2`,
    ],
    [
      `SELECT venue_id, local_day, product_id, quantity, revenue_minor FROM product_daily
       WHERE tenant_id = $1 AND (quantity <> 0 OR revenue_minor <> 0)`,
      `SELECT p.venue_id, f.local_day, p.product_id, sum(p.quantity)::bigint AS quantity, sum(p.revenue_minor)::bigint AS revenue_minor
       FROM order_product_facts p JOIN order_facts f USING (tenant_id, order_id, venue_id)
       WHERE p.tenant_id = $1 AND f.sale GROUP BY 1, 2, 3 HAVING sum(p.quantity) <> 0 OR sum(p.revenue_minor) <> 0`,
    ],
    [
      `SELECT local_day, product_id, quantity, revenue_minor FROM product_daily_tenant
       WHERE tenant_id = $1 AND (quantity <> 0 OR revenue_minor <> 0)`,
      `SELECT f.local_day, p.product_id, sum(p.quantity)::bigint AS quantity, sum(p.revenue_minor)::bigint AS revenue_minor
       FROM order_product_facts p JOIN order_facts f USING (tenant_id, order_id, venue_id)
       WHERE p.tenant_id = $1 AND f.sale GROUP BY 1, 2 HAVING sum(p.quantity) <> 0 OR sum(p.revenue_minor) <> 0`,
    ],
  ];
  const sorted = (r: unknown[]) => r.map((x) => JSON.stringify(x)).sort();
  for (const [rollup, facts] of pairs) expect(sorted(await rows(rollup)), rollup).toEqual(sorted(await rows(facts)));
  expect(await rows('SELECT 1 FROM kitchen_daily WHERE tenant_id = $1 AND seconds_max < 0')).toEqual([]);
}

test('versions, replays, cancellations and orders over two venues keep the rollups equal to the facts', async () => {
  const rnd = random(7);
  const device = 'dev-a';
  const ids = Array.from({ length: 12 }, (_, i) => `f-${i}`);
  const versions = new Map<string, number>();
  for (let round = 0; round < 15; round++) {
    const batch = Array.from({ length: 1 + Math.floor(rnd() * 6) }, () => {
      const id = ids[Math.floor(rnd() * ids.length)]!;
      const v = (versions.get(id) ?? 0) + 1;
      versions.set(id, v);
      return event(device, id, v, rnd, id.endsWith('3') ? [V1, V2] : [id < 'f-6' ? V1 : V2]);
    });
    await inTransaction(pool, (c) => project(c, batch, round % 2 === 0));
    // The same events once more (a replay the ingest would have skipped): nothing moves.
    if (round % 5 === 4) await inTransaction(pool, (c) => project(c, batch, false));
    await expectRollupsEqualFacts();
  }
  expect(
    (await rows(`SELECT count(*)::int AS n FROM order_facts WHERE tenant_id = $1 AND order_id LIKE 'f-%'`))[0].n,
  ).toBe(13);
});

test('two devices of one venue committing side by side never lose a share or a maximum', async () => {
  const rnd = random(11);
  const versions = new Map<string, number>();
  for (let round = 0; round < 12; round++) {
    await Promise.all(
      ['dev-b', 'dev-c'].map((device) => {
        const batch = Array.from({ length: 3 }, (_, i) => {
          const id = `${device}-${i}`;
          const v = (versions.get(id) ?? 0) + 1;
          versions.set(id, v);
          return event(device, id, v, rnd, [V1]);
        });
        return inTransaction(pool, (c) => project(c, batch, true));
      }),
    );
    await expectRollupsEqualFacts();
  }
});

test('fact inputs: the newest contact, the earliest ORDERED and READY whatever the order of events', () => {
  const at = (m: number) => new Date(Date.UTC(2026, 0, 1, 12, m)).toISOString();
  const e = (seq: number, status: string, m: number, name?: string) => ({
    id: 'o',
    seq,
    status,
    confirmedAt: at(m),
    contact: name ? { name } : null,
  });
  const inputs = [e(3, 'READY', 9, 'B'), e(1, 'NEW', 1, 'A'), e(2, 'ORDERED', 4, 'A'), e(4, 'READY', 20, 'B')];
  const expected = [{ orderId: 'o', contact: '{"name":"B"}', orderedAt: new Date(at(4)), readyAt: new Date(at(9)) }];
  expect(factInputs(inputs)).toEqual(expected);
  expect(factInputs([...inputs].reverse())).toEqual(expected);
  expect(factInputs([{ ...e(1, 'READY', 0), confirmedAt: 'x' }])[0]).toMatchObject({ orderedAt: null, readyAt: null });
});
