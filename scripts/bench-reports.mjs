// Headquarters' reports and order search (docs/performance.md "HQ reports and searches"), on this machine, printed,
// never asserted. A central (niced, core 1) with a generated chain of VENUES venues, a device each, and ORDERS
// orders over DAYS days up to now, written straight into its PostgreSQL with generate_series: the orders rows (the
// Order JSON the search returns), their report facts and product facts, then the rollups by the same GROUP BY
// as migration 7's backfill (src/central/db/migrations/0007-reports.ts), then ANALYZE (autovacuum's steady state).
// Then each report route and order search mix is called ROUNDS times over HTTP (after WARMUP calls), one at a
// time from this process (core 0): p50/p95 per mix, as JSON lines. Run: `npm run bench:reports`.
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { demo, quantile, withForeignCpu } from './lib/box.mjs';
import { benchRun, startCentral, stop, treeOf } from './lib/run.mjs';

const VENUES = Number(process.env.VENUES ?? 200);
const ORDERS = Number(process.env.ORDERS ?? 1_000_000);
const DAYS = Number(process.env.DAYS ?? 60);
const ROUNDS = Number(process.env.ROUNDS ?? 30);
const WARMUP = 3;

const { started, tmp } = benchRun();
execFileSync('taskset', ['-apc', '0', String(process.pid)], { stdio: 'ignore' });

// ---- the chain: VENUES venues of the demo's first (Europe/Warsaw, the demo menu), each with its warehouse.
const dataDir = tmp('vb-bench-reports-');
const tenant = { ...structuredClone(demo), id: randomUUID(), name: 'Generated chain' };
tenant.warehouses = Array.from({ length: VENUES }, (_, v) => ({ id: randomUUID(), name: `Magazyn ${v}` }));
tenant.venues = tenant.warehouses.map((w, v) => ({
  ...structuredClone(demo.venues[0]),
  id: randomUUID(),
  name: `Lokal ${String(v).padStart(3, '0')}`,
  warehouse: w.id,
}));
tenant.users = [...demo.users.slice(0, 3), { username: 'centrala', password: 'centrala-demo-1', scope: 'read write' }];
const provisioning = join(dataDir, 'chain.json');
writeFileSync(provisioning, JSON.stringify({ tenants: [tenant] }));
const central = await startCentral(started, join(dataDir, 'central'), { args: ['--provisioning', provisioning] });
const facts = JSON.parse(readFileSync(join(dataDir, 'central', 'central-db.json'), 'utf8'));
const db = new pg.Client(
  `postgres://${facts.user}:${encodeURIComponent(facts.password)}@127.0.0.1:${facts.port}/postgres`,
);
await db.connect();

// ---- the data. Orders: status by a hash of i (70 COMPLETED, 10 READY, 8 ORDERED, 5 NEW, 7 CANCELLED), one to four
// lines of the demo's products, a contact on 3 in 10 (first name, surname, phone, e-mail from small lists), one in
// 50 over two venues. Kitchen: ORDERED one minute after created, READY 4 to 24 minutes later.
const products = demo.menus[0].root.items
  .flatMap((c) => c.items)
  .map((p) => ({ id: p.id, name: p.details.literals.name, price: p.price }));
const t0 = Date.now();
const step = async (what, sql, params = []) => {
  const t = Date.now();
  const r = await db.query(sql, params);
  console.log(JSON.stringify({ step: what, rows: r.rowCount, seconds: (Date.now() - t) / 1000 }));
};
await db.query('SET maintenance_work_mem = 262144'); // 256 MB, for the GIN index's pending list and sorts
// h(salt, i): 0..99, independent of i's residues (venue and device are i % VENUES), so filters combine as in life.
await db.query(
  `CREATE FUNCTION pg_temp.h(salt int, i int) RETURNS int LANGUAGE sql IMMUTABLE
   AS $$ SELECT ((hashint4(i * 31 + salt) & 2147483647) % 100)::int $$`,
);
await step(
  'devices',
  `INSERT INTO devices (tenant_id, device_id, venue_id, name, public_key, key_id, head_hash, last_contact_at)
   SELECT $1, 'dev-' || n, v, 'box ' || n, '\\x00', 'k', 'h', now() - (n % 30) * interval '1 minute'
   FROM unnest($2::text[]) WITH ORDINALITY AS t(v, n)`,
  [tenant.id, tenant.venues.map((v) => v.id)],
);
await db.query(
  `CREATE TEMP TABLE gen AS
   SELECT i, 'b-' || lpad(i::text, 8, '0') AS order_id, ($2::text[])[1 + i % $3] AS venue,
     ($2::text[])[1 + (i + 7) % $3] AS venue2, i % 50 = 0 AS multi, 'dev-' || (1 + i % $3) AS device,
     CASE WHEN pg_temp.h(1, i) < 70 THEN 'COMPLETED' WHEN pg_temp.h(1, i) < 80 THEN 'READY' WHEN pg_temp.h(1, i) < 88 THEN 'ORDERED'
          WHEN pg_temp.h(1, i) < 93 THEN 'NEW' ELSE 'CANCELLED' END AS status,
     (ARRAY['TAKE_AWAY', 'DINE_IN', 'DELIVERY', 'DINE_IN', 'TAKE_AWAY'])[1 + pg_temp.h(2, i) % 5] AS order_type,
     (ARRAY['KIOSK', 'WAITER', 'PHONE', 'WEB'])[1 + pg_temp.h(3, i) % 4] AS source,
     now() - (random() * $4) * interval '1 day' AS created_at,
     CASE WHEN pg_temp.h(4, i) < 30 THEN jsonb_build_object(
       'name', (ARRAY['Anna', 'Jan', 'Piotr', 'Maria', 'Katarzyna', 'Tomasz', 'Agnieszka', 'Paweł'])[1 + pg_temp.h(5, i) % 8] || ' ' ||
               (ARRAY['Nowak', 'Kowalski', 'Wiśniewska', 'Wójcik', 'Kamiński', 'Lewandowska', 'Zieliński', 'Szymańska',
                      'Woźniak', 'Dąbrowski', 'Kozłowska', 'Jankowski'])[1 + pg_temp.h(6, i) % 12],
       'phone', '+48 ' || (500 + pg_temp.h(7, i) * 4 + i % 4) || ' ' || lpad((pg_temp.h(8, i) * 10 + i % 10)::text, 3, '0') || ' ' || lpad((i / 1000 % 1000)::text, 3, '0'),
       'email', 'klient' || i || '@example.pl') END AS contact,
     1 + pg_temp.h(9, i) % 4 AS nlines
   FROM generate_series(1, $1) AS i`,
  [ORDERS, tenant.venues.map((v) => v.id), VENUES, DAYS],
);
await db.query(
  `CREATE TEMP TABLE gen_lines AS
   SELECT g.i, g.order_id, CASE WHEN g.multi AND k = 2 THEN g.venue2 ELSE g.venue END AS venue, k,
     (($1::jsonb) -> ((g.i * 7 + k * 3) % jsonb_array_length($1::jsonb))::int) AS p, 1 + (g.i + k) % 3 AS quantity
   FROM gen g, generate_series(1, g.nlines) AS k`,
  [JSON.stringify(products)],
);
await db.query(
  `CREATE TEMP TABLE gen_buckets AS
   SELECT i, jsonb_agg(bucket ORDER BY first_k) AS buckets FROM (
     SELECT l.i, min(l.k) AS first_k, jsonb_build_object('venue', l.venue, 'lines', jsonb_agg(jsonb_build_object(
       'id', l.order_id || '-' || l.k, 'productId', l.p->>'id', 'quantity', l.quantity, 'price', l.p->>'price',
       'status', CASE WHEN g.status = 'CANCELLED' THEN 'CANCELLED' ELSE 'ORDERED' END,
       'product', jsonb_build_object('id', l.p->>'id', 'literals', jsonb_build_object('name', l.p->>'name')))
       ORDER BY l.k)) AS bucket
     FROM gen_lines l JOIN gen g USING (i) GROUP BY l.i, l.venue) x
   GROUP BY i`,
);
await step(
  'orders',
  `INSERT INTO orders (tenant_id, order_id, device_id, version, last_seq, status, venue_ids, created_at, data)
   SELECT $1::text, g.order_id, g.device, 3, g.i, g.status,
     CASE WHEN g.multi THEN ARRAY[g.venue, g.venue2] ELSE ARRAY[g.venue] END, g.created_at,
     jsonb_build_object('tenant', $1::text, 'id', g.order_id, 'created', g.created_at, 'lastChanged', g.created_at,
       'source', g.source, 'orderType', g.order_type, 'status', g.status, 'claimCode', lpad((g.i % 1000)::text, 3, '0'),
       'buckets', b.buckets)
   FROM gen g JOIN gen_buckets b USING (i)`,
  [tenant.id],
);
await step(
  'order_facts',
  `INSERT INTO order_facts (tenant_id, order_id, venue_id, first_venue, device_id, status, order_type, source, created_at,
     local_day, local_hour, total_minor, ordered_at, ready_at, contact_text, contact)
   SELECT $1, g.order_id, l.venue, l.venue = g.venue, g.device, g.status, g.order_type, g.source, g.created_at,
     (g.created_at AT TIME ZONE 'Europe/Warsaw')::date, extract(hour FROM g.created_at AT TIME ZONE 'Europe/Warsaw')::smallint,
     CASE WHEN g.status = 'CANCELLED' THEN 0 ELSE sum(round((l.p->>'price')::numeric * 100)::bigint * l.quantity) END,
     CASE WHEN g.status <> 'NEW' THEN g.created_at + interval '1 minute' END,
     CASE WHEN g.status IN ('READY', 'COMPLETED') THEN g.created_at + (5 + g.i % 21) * interval '1 minute' END,
     CASE WHEN g.contact IS NULL THEN '' ELSE lower(concat_ws(' ', g.contact->>'name', g.contact->>'phone', g.contact->>'email')) END,
     g.contact
   FROM gen g JOIN gen_lines l USING (i) GROUP BY g.i, g.order_id, l.venue, g.venue, g.device, g.status, g.order_type,
     g.source, g.created_at, g.contact`,
  [tenant.id],
);
await step(
  'order_product_facts',
  `INSERT INTO order_product_facts (tenant_id, order_id, venue_id, product_id, quantity, revenue_minor)
   SELECT $1, l.order_id, l.venue, l.p->>'id', sum(l.quantity), sum(round((l.p->>'price')::numeric * 100)::bigint * l.quantity)
   FROM gen_lines l JOIN gen g USING (i) WHERE g.status <> 'CANCELLED' GROUP BY l.order_id, l.venue, l.p->>'id'`,
  [tenant.id],
);
// The rollups, as migration 7's backfill makes them from the facts.
for (const [what, sql] of [
  [
    'product_names',
    `INSERT INTO product_names SELECT DISTINCT ON (p->>'id') $1, p->>'id', p->>'name', now() FROM gen_lines`,
  ],
  [
    'sales_daily',
    `INSERT INTO sales_daily SELECT tenant_id, venue_id, local_day, order_type, count(*), sum(total_minor)
    FROM order_facts WHERE tenant_id = $1 AND sale GROUP BY 1, 2, 3, 4`,
  ],
  [
    'sales_hourly',
    `INSERT INTO sales_hourly SELECT tenant_id, venue_id, local_day, local_hour, count(*), sum(total_minor)
    FROM order_facts WHERE tenant_id = $1 AND sale GROUP BY 1, 2, 3, 4`,
  ],
  [
    'kitchen_daily',
    `INSERT INTO kitchen_daily SELECT tenant_id, venue_id, local_day, count(*), sum(kitchen_seconds), max(kitchen_seconds)
    FROM order_facts WHERE tenant_id = $1 AND kitchen_seconds IS NOT NULL GROUP BY 1, 2, 3`,
  ],
  [
    'product_daily',
    `INSERT INTO product_daily SELECT p.tenant_id, p.venue_id, f.local_day, p.product_id, sum(p.quantity), sum(p.revenue_minor)
    FROM order_product_facts p JOIN order_facts f USING (tenant_id, order_id, venue_id) WHERE p.tenant_id = $1 AND f.sale GROUP BY 1, 2, 3, 4`,
  ],
  [
    'product_daily_tenant',
    `INSERT INTO product_daily_tenant SELECT tenant_id, local_day, product_id, sum(quantity), sum(revenue_minor)
    FROM product_daily WHERE tenant_id = $1 GROUP BY 1, 2, 3`,
  ],
])
  await step(what, sql, [tenant.id]);
await step('analyze', 'ANALYZE');
const generated = (Date.now() - t0) / 1000;
// An e-mail the search should find once: one of an order in the middle of the range that has a contact.
const { rows: withEmail } = await db.query(`SELECT min(i) AS i FROM gen WHERE contact IS NOT NULL AND i > $1 / 2`, [
  ORDERS,
]);
await db.end();

// ---- the calls: each mix ROUNDS times after WARMUP, one at a time.
const base = central.base;
const basic = Buffer.from(`${demo.clients[0].clientId}:${demo.clients[0].clientSecret}`).toString('base64');
const tokenRes = await fetch(`${base}/auth-oauth2/oauth/token`, {
  method: 'POST',
  headers: {
    'content-type': 'application/x-www-form-urlencoded',
    'x-tenant': tenant.id,
    authorization: `Basic ${basic}`,
  },
  body: new URLSearchParams({ grant_type: 'password', username: 'centrala', password: 'centrala-demo-1' }).toString(),
});
const { access_token: token } = await tokenRes.json();
const day = (offset) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10);
const month = `from=${day(-29)}&to=${day(0)}`;
const venue = tenant.venues[17].id;
const mixes = [
  ['sales by day, chain, 30 days', `/hq-api/api/reports/sales?${month}`],
  ['sales by day, chain, 366 days', `/hq-api/api/reports/sales?from=${day(-365)}&to=${day(0)}`],
  ['sales by day, one venue, 30 days', `/hq-api/api/reports/sales?${month}&venueId=${venue}`],
  ['sales by hour, chain, 1 day', `/hq-api/api/reports/sales?from=${day(-1)}&to=${day(-1)}&by=hour`],
  [
    'sales by hour, one venue, 31 days',
    `/hq-api/api/reports/sales?from=${day(-30)}&to=${day(0)}&by=hour&venueId=${venue}`,
  ],
  ['products, chain, 30 days', `/hq-api/api/reports/products?${month}`],
  ['products, chain, 366 days', `/hq-api/api/reports/products?from=${day(-365)}&to=${day(0)}&limit=200`],
  ['products, one venue, 30 days', `/hq-api/api/reports/products?${month}&venueId=${venue}`],
  ['channels, chain, 30 days', `/hq-api/api/reports/channels?${month}`],
  ['kitchen, chain, 30 days', `/hq-api/api/reports/kitchen?${month}`],
  ['dashboard', '/hq-api/api/dashboard'],
  ['orders, newest', '/hq-api/api/orders'],
  ['orders, one venue', `/hq-api/api/orders?venueId=${venue}`],
  ['orders, CANCELLED', '/hq-api/api/orders?status=CANCELLED'],
  ['orders, one device, READY', '/hq-api/api/orders?deviceId=dev-5&status=READY'],
  ['orders, a device with none', '/hq-api/api/orders?deviceId=dev-none'],
  ['orders, a source with none', '/hq-api/api/orders?source=NONE'],
  ['orders, NEW from WEB in one venue', `/hq-api/api/orders?status=NEW&source=WEB&venueId=${venue}`],
  ['orders, one day 3 weeks ago', `/hq-api/api/orders?from=${day(-21)}&to=${day(-21)}`],
  ['orders, q surname', '/hq-api/api/orders?q=kowalski'],
  ['orders, q phone fragment', '/hq-api/api/orders?q=600%2012'],
  ['orders, q e-mail (one order)', `/hq-api/api/orders?q=klient${withEmail[0].i}@`],
  ['orders, q no match', '/hq-api/api/orders?q=zzqx'],
  ['orders, q + venue + source', `/hq-api/api/orders?q=anna&venueId=${venue}&source=KIOSK`],
  ['orders, q + status + dates', `/hq-api/api/orders?q=nowak&status=COMPLETED&from=${day(-14)}&to=${day(-7)}`],
];
const pids = () => [process.pid, ...treeOf(central.proc.pid)];
const results = [];
const { foreignCpuPct } = await withForeignCpu(pids, async () => {
  for (const [name, path] of mixes) {
    const times = [];
    let bytes = 0;
    for (let i = 0; i < WARMUP + ROUNDS; i++) {
      const t = performance.now();
      const res = await fetch(`${base}${path}`, { headers: { authorization: `Bearer ${token}` } });
      const text = await res.text();
      if (res.status !== 200) throw new Error(`${path}: ${res.status} ${text}`);
      if (i >= WARMUP) times.push(performance.now() - t);
      bytes = text.length;
    }
    times.sort((a, b) => a - b);
    const line = {
      route: name,
      p50Ms: +quantile(times, 0.5).toFixed(1),
      p95Ms: +quantile(times, 0.95).toFixed(1),
      bytes,
    };
    results.push(line);
    console.log(JSON.stringify(line));
  }
  return {};
});
console.log(
  JSON.stringify({
    venues: VENUES,
    orders: ORDERS,
    days: DAYS,
    rounds: ROUNDS,
    generatedSeconds: generated,
    foreignCpuPct,
    loadAverage: loadavg().map((x) => +x.toFixed(2)),
    worstP95Ms: Math.max(...results.map((r) => r.p95Ms)),
  }),
);
await stop(central.proc);
