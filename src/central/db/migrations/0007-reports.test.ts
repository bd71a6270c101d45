import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { openEmbedded, type EmbeddedDatabase } from '../embedded.js';
import { migrate } from '../migrate.js';
import { createPool, type Pool } from '../pool.js';

// Migration 7 on a central at schema 6 that holds orders: the facts and rollups are backfilled from orders,
// their versions and the raw event of each order's newest state (docs/sync.md "HQ reports and order search").
let pg: EmbeddedDatabase;
let pool: Pool;
beforeAll(async () => {
  pg = await openEmbedded(mkdtempSync(join(tmpdir(), 'vb-central-m7-')), 'serve');
  pool = createPool(pg.url, 2);
  expect(await migrate(pool, 6)).toEqual({ from: 0, to: 6 });
  await atSchema6();
});
afterAll(async () => {
  await pool.end();
  await pg.stop();
});

const line = (productId: string, name: string, quantity: number, price: string, status = 'ORDERED') => ({
  productId,
  quantity,
  price,
  status,
  product: { details: { literals: { name } } },
});

async function atSchema6(): Promise<void> {
  await pool.query(`INSERT INTO tenants (tenant_id, name) VALUES ('t', 'T')`);
  await pool.query(`INSERT INTO venues (tenant_id, venue_id, name, document) VALUES
    ('t', 'krk', 'Kraków', '{"timeZone": "Europe/Warsaw"}'), ('t', 'mars', 'Mars', '{"timeZone": "Mars/Olympus"}'),
    ('t', 'nyc', 'New York', '{"timeZone": "America/New_York"}')`);
  const order = async (
    id: string,
    created: string,
    buckets: unknown[],
    versions: [status: string, confirmedAt: string][],
    contact?: Record<string, string>,
  ) => {
    const data = (status: string) => ({ id, created, status, orderType: 'TAKE_AWAY', source: 'KIOSK', buckets });
    const last = versions[versions.length - 1]![0];
    const seq = versions.length;
    await pool.query(
      `INSERT INTO orders (tenant_id, order_id, device_id, version, last_seq, status, venue_ids, created_at, data)
       VALUES ('t', $1, 'd', $2, $3, $4, '{}', $5, $6)`,
      [id, versions.length, seq, last, created, JSON.stringify(data(last))],
    );
    for (const [i, [status, at]] of versions.entries())
      await pool.query(
        `INSERT INTO order_versions (tenant_id, order_id, device_id, seq, version, data, command)
         VALUES ('t', $1, 'd', $2, $3, $4, $5)`,
        [id, i + 1, i + 1, JSON.stringify(data(status)), JSON.stringify({ confirmedAt: at })],
      );
    if (contact)
      await pool.query(
        `INSERT INTO sync_events (tenant_id, device_id, seq, epoch, envelope, chain_hash) VALUES ('t', 'd', $1, 1, $2, 'h')`,
        [seq, JSON.stringify({ kind: 'order.changed', body: { detail: { contact } } })],
      );
  };
  // Warsaw's 00:30 on the 29th; first ORDERED at +60 s, first READY at +420 s (a later READY does not count).
  await order(
    'o1',
    '2026-03-28T23:30:00Z',
    [
      {
        venue: 'krk',
        lines: [line('pierogi', 'Pierogi', 2, '24.50'), line('zurek', 'Żurek', 1, '19.99', 'CANCELLED')],
      },
    ],
    [
      ['NEW', '2026-03-28T23:30:00Z'],
      ['ORDERED', '2026-03-28T23:31:00Z'],
      ['READY', '2026-03-28T23:37:00Z'],
      ['ORDERED', '2026-03-28T23:40:00Z'],
      ['READY', '2026-03-28T23:59:00Z'],
    ],
    { name: 'Ala Nowak', phone: '+48 123', email: 'Ala@X.PL' },
  );
  // Two venues: New York's 23:30 on the 28th (summer time there already); a confirmedAt that is no date.
  await order(
    'o2',
    '2026-03-29T03:30:00Z',
    [
      { venue: 'krk', lines: [line('piwo', 'Piwo', 1, '12.00')] },
      { venue: 'nyc', lines: [line('zurek', 'Zupa', 2, '19.99')] },
    ],
    [
      ['NEW', 'x'],
      ['ORDERED', 'not a date'],
    ],
  );
  // A sale cancelled: a fact, no share in any rollup; a venue whose zone PostgreSQL does not know reads as Warsaw.
  await order(
    'o3',
    '2026-03-28T22:00:00Z',
    [{ venue: 'mars', lines: [line('piwo', 'Piwo', 9, '12.00', 'CANCELLED')] }],
    [
      ['NEW', '2026-03-28T22:00:00Z'],
      ['ORDERED', '2026-03-28T22:01:00Z'],
      ['CANCELLED', '2026-03-28T22:02:00Z'],
    ],
  );
}

test('migration 7 backfills facts, product facts, names and rollups from the orders held', async () => {
  expect(await migrate(pool)).toMatchObject({ from: 6 });
  const facts = await pool.query(
    `SELECT order_id, venue_id, first_venue, status, order_type, source, to_char(local_day, 'YYYY-MM-DD') AS day,
       local_hour, total_minor, ordered_at, ready_at, contact_text, contact, sale, kitchen_seconds
     FROM order_facts ORDER BY order_id, venue_id`,
  );
  const base = { order_type: 'TAKE_AWAY', source: 'KIOSK' };
  expect(facts.rows).toEqual([
    {
      ...base,
      order_id: 'o1',
      venue_id: 'krk',
      first_venue: true,
      status: 'READY',
      day: '2026-03-29',
      local_hour: 0,
      total_minor: 4900,
      ordered_at: new Date('2026-03-28T23:31:00Z'),
      ready_at: new Date('2026-03-28T23:37:00Z'),
      contact_text: 'ala nowak +48 123 ala@x.pl',
      contact: { name: 'Ala Nowak', phone: '+48 123', email: 'Ala@X.PL' },
      sale: true,
      kitchen_seconds: 360,
    },
    ...[
      ['krk', true, '2026-03-29', 5, 1200],
      ['nyc', false, '2026-03-28', 23, 3998],
    ].map(([venue_id, first_venue, day, local_hour, total_minor]) => ({
      ...base,
      order_id: 'o2',
      venue_id,
      first_venue,
      status: 'ORDERED',
      day,
      local_hour,
      total_minor,
      ordered_at: null,
      ready_at: null,
      contact_text: '',
      contact: null,
      sale: true,
      kitchen_seconds: null,
    })),
    {
      ...base,
      order_id: 'o3',
      venue_id: 'mars',
      first_venue: true,
      status: 'CANCELLED',
      day: '2026-03-28',
      local_hour: 23,
      total_minor: 0,
      ordered_at: new Date('2026-03-28T22:01:00Z'),
      ready_at: null,
      contact_text: '',
      contact: null,
      sale: false,
      kitchen_seconds: null,
    },
  ]);
  const rows = async (sql: string) => (await pool.query(sql)).rows;
  expect(
    await rows(`SELECT venue_id, to_char(local_day, 'YYYY-MM-DD') AS day, order_type, orders, revenue_minor
                FROM sales_daily ORDER BY venue_id, local_day`),
  ).toEqual([
    { venue_id: 'krk', day: '2026-03-29', order_type: 'TAKE_AWAY', orders: 2, revenue_minor: 6100 },
    { venue_id: 'nyc', day: '2026-03-28', order_type: 'TAKE_AWAY', orders: 1, revenue_minor: 3998 },
  ]);
  expect(await rows('SELECT venue_id, local_hour, orders FROM sales_hourly ORDER BY venue_id, local_hour')).toEqual([
    { venue_id: 'krk', local_hour: 0, orders: 1 },
    { venue_id: 'krk', local_hour: 5, orders: 1 },
    { venue_id: 'nyc', local_hour: 23, orders: 1 },
  ]);
  expect(await rows('SELECT venue_id, orders, seconds_sum, seconds_max FROM kitchen_daily')).toEqual([
    { venue_id: 'krk', orders: 1, seconds_sum: 360, seconds_max: 360 },
  ]);
  expect(
    await rows('SELECT product_id, quantity, revenue_minor FROM product_daily_tenant ORDER BY product_id'),
  ).toEqual([
    { product_id: 'pierogi', quantity: 2, revenue_minor: 4900 },
    { product_id: 'piwo', quantity: 1, revenue_minor: 1200 },
    { product_id: 'zurek', quantity: 2, revenue_minor: 3998 },
  ]);
  // The newest order that sold a product names it: o2's "Zupa" for zurek; o3's cancelled line sold nothing.
  expect(await rows('SELECT product_id, name FROM product_names ORDER BY product_id')).toEqual([
    { product_id: 'pierogi', name: 'Pierogi' },
    { product_id: 'piwo', name: 'Piwo' },
    { product_id: 'zurek', name: 'Zupa' },
  ]);
});
