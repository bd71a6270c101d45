// Catalogue figures (docs/sync.md "Down: the catalogue", "Figures (down)"), on this machine, printed, never asserted:
//  1. a change at the central (a price, an order for a venue) until DEVICES simulated boxes holding long polls
//     have it: p50/p99 over ROUNDS rounds, for the demo tenant and for a generated chain;
//  2. a snapshot (what a new box receives) of the demo tenant and of a generated tenant of VENUES venues and
//     PRODUCTS products: its size, and the central's time to answer it (cold: the first after a change,
//     checksum computed; warm: the checksum cached).
// The central and its PostgreSQL run niced on core 1; the simulated boxes (signed HTTP clients, this process)
// on core 0. Run: `node scripts/bench-catalogue.mjs` after `npm run build`.
import { execFileSync, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadSimDevice } from './lib/sim-device.mjs';
import { demo, quantile, withForeignCpu } from './lib/box.mjs';
import { benchRun, cli, root, startCentral, stop, treeOf } from './lib/run.mjs';

const DEVICES = Number(process.env.DEVICES ?? 100);
const ROUNDS = Number(process.env.ROUNDS ?? 20);
const VENUES = Number(process.env.VENUES ?? 200);
const PRODUCTS = Number(process.env.PRODUCTS ?? 2000);
const MENUS = Number(process.env.MENUS ?? 20);

const { started, tmp } = benchRun();

execFileSync('taskset', ['-apc', '0', String(process.pid)], { stdio: 'ignore' });
const { SimDevice } = await loadSimDevice();

const centralDir = tmp('vb-bench-cat-');
// ---- a generated chain: VENUES venues (each its warehouse), PRODUCTS products over MENUS menus.
const gen = (() => {
  const t = structuredClone(demo);
  const id = randomUUID();
  const product = t.menus[0].root.items[0].items[0];
  const perMenu = Math.ceil(PRODUCTS / MENUS);
  const menus = Array.from({ length: MENUS }, (_, m) => ({
    id: `menu-${m}`,
    root: {
      kind: 'svc/group/category',
      id: 'root',
      details: { literals: { name: `Menu ${m}` } },
      items: Array.from({ length: 10 }, (_, c) => ({
        kind: 'svc/group/category',
        id: `cat-${c}`,
        details: { literals: { name: `Kategoria ${c}` } },
        items: Array.from({ length: Math.ceil(perMenu / 10) }, (_, p) => ({
          ...structuredClone(product),
          id: `p-${m}-${c}-${p}`,
          price: `${10 + ((m + c + p) % 40)}.50`,
          details: {
            literals: {
              name: `Produkt ${m}/${c}/${p}`,
              description: 'Opis produktu, dwa zdania, żeby miał typową długość.',
            },
            media: [{ url: `/media/${'ab'.repeat(32)}.jpg`, name: 'MAIN_IMG' }],
          },
        })),
      })),
    },
  }));
  const warehouses = Array.from({ length: VENUES }, (_, v) => ({ id: randomUUID(), name: `Magazyn ${v}` }));
  const venues = warehouses.map((w, v) => ({
    ...structuredClone(t.venues[0]),
    id: randomUUID(),
    name: `Lokal ${v}`,
    menu: menus[v % MENUS].id,
    warehouse: w.id,
    geoPosition: { lat: 49 + (v % 50) / 10, lng: 14 + Math.floor(v / 50) },
  }));
  // Its users: staff of the boxes when imported into the catalogue, headquarters' users when provisioned at serve.
  const users = [...t.users.slice(0, 3), { username: 'centrala', password: 'centrala-demo-1', scope: 'read write' }];
  return { ...t, id, name: 'Generated chain', users, menus, venues, warehouses };
})();
const genFile = join(centralDir, 'generated.json');
writeFileSync(genFile, JSON.stringify({ tenants: [gen] }));
const central = await startCentral(started, centralDir, { args: ['--provisioning', genFile] });
const pids = () => [process.pid, ...treeOf(central.proc.pid)];

console.log(
  `importing a generated chain: ${gen.venues.length} venues, ${gen.menus.reduce((n, m) => n + m.root.items.reduce((k, c) => k + c.items.length, 0), 0)} products in ${MENUS} menus...`,
);
cli(['central', 'import', '--data-dir', centralDir, genFile]);

async function hqToken(tenant, client) {
  const res = await fetch(`${central.base}/auth-oauth2/oauth/token`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      'x-tenant': tenant,
      authorization: `Basic ${Buffer.from(`${client.clientId}:${client.clientSecret}`).toString('base64')}`,
    },
    body: new URLSearchParams({ grant_type: 'password', username: 'centrala', password: 'centrala-demo-1' }),
  });
  if (res.status !== 200) throw new Error(`hq token ${res.status} ${await res.text()}`);
  return (await res.json()).access_token;
}

async function enrolSims(tenant, venue, n) {
  const sims = [];
  for (let i = 0; i < n; i += 10) {
    const codes = await Promise.all(
      Array.from(
        { length: Math.min(10, n - i) },
        () =>
          new Promise((resolve, reject) => {
            const p = spawn(
              process.execPath,
              ['dist/main.cjs', 'central', 'enrol', '--data-dir', centralDir, '--tenant', tenant, '--venue', venue],
              { cwd: root },
            );
            let out = '';
            p.stdout.on('data', (d) => {
              out += d;
            });
            p.on('exit', (c) => (c === 0 ? resolve(out.trim().split('\n').pop()) : reject(new Error(`enrol ${c}`))));
          }),
      ),
    );
    for (const c of codes) {
      const d = new SimDevice(central.base);
      const r = await d.enrol(c);
      if (r.status !== 201) throw new Error(`enrol: ${r.status}`);
      sims.push(d);
    }
  }
  return sims;
}

/** Snapshot size and the central's time to answer it: cold (first after a change) and warm (checksum cached). */
async function snapshotFigures(sim, change) {
  await change();
  const t0 = performance.now();
  const cold = await sim.catalogue(0);
  const coldMs = performance.now() - t0;
  const warm = [];
  for (let i = 0; i < 10; i++) {
    const t = performance.now();
    await sim.catalogue(0);
    warm.push(performance.now() - t);
  }
  warm.sort((a, b) => a - b);
  return {
    bytes: Buffer.byteLength(JSON.stringify(cold.body)),
    items: cold.body.items.length,
    coldMs: +coldMs.toFixed(1),
    warmP50Ms: +quantile(warm, 0.5).toFixed(1),
  };
}

/**
 * ROUNDS rounds: every sim holds a long poll after the current rev; `change()` at the central; each sim's
 * latency from just before the change was sent to its answer carrying the new rev.
 */
async function propagation(sims, change) {
  const latencies = [];
  let rev = (await sims[0].catalogue(0)).body.rev;
  for (let round = 0; round < ROUNDS; round++) {
    let t0 = 0;
    const polls = sims.map((s) =>
      s.catalogue(rev, 60).then((a) => {
        if (a.status !== 200 || a.body.rev <= rev) throw new Error(`poll: ${a.status} rev ${a.body.rev}`);
        latencies.push(performance.now() - t0);
        return a.body.rev;
      }),
    );
    // Every poll is at the central, waiting, before the change.
    await new Promise((r) => setTimeout(r, 300));
    t0 = performance.now();
    await change(round);
    const revs = await Promise.all(polls);
    rev = Math.max(...revs);
  }
  latencies.sort((a, b) => a - b);
  return {
    p50Ms: +quantile(latencies, 0.5).toFixed(1),
    p99Ms: +quantile(latencies, 0.99).toFixed(1),
    maxMs: +latencies.at(-1).toFixed(1),
    n: latencies.length,
  };
}

const results = {};
for (const [name, tenant, venue, menuOf] of [
  ['demo', demo, demo.venues[0].id, (v) => demo.venues.find((x) => x.id === v).menu],
  ['generated', gen, gen.venues[0].id, (v) => gen.venues.find((x) => x.id === v).menu],
]) {
  console.log(`${name}: enrolling ${DEVICES} simulated boxes at venue ${venue}...`);
  const sims = await enrolSims(tenant.id, venue, DEVICES);
  const token = await hqToken(tenant.id, tenant.clients[0]);
  const menu = menuOf(venue);
  const firstProduct = (function find(n) {
    return n.kind === 'svc/product' ? n.id : n.items.map(find).find(Boolean);
  })(tenant.menus.find((m) => m.id === menu).root);
  const hq = (method, path, body) =>
    fetch(`${central.base}/hq-api/api${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    }).then(async (r) => {
      if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${await r.text()}`);
      return r.json();
    });
  const price = (i) =>
    hq('PATCH', `/menus/${menu}/products/${firstProduct}`, {
      price: `${20 + (i % 50)}.${String(i % 100).padStart(2, '0')}`,
    });
  let n = 0;
  const snapshot = await withForeignCpu(pids, () => snapshotFigures(sims[0], () => price(n++)));
  console.log(
    `  snapshot: ${(snapshot.bytes / 1024).toFixed(0)} KiB, ${snapshot.items} rows; central answers in ${snapshot.coldMs} ms cold, ${snapshot.warmP50Ms} ms warm (foreign CPU ${snapshot.foreignCpuPct}%)`,
  );
  const priceRun = await withForeignCpu(pids, () => propagation(sims, () => price(n++)));
  console.log(
    `  a price change to ${DEVICES} long polls: p50 ${priceRun.p50Ms} ms, p99 ${priceRun.p99Ms} ms, max ${priceRun.maxMs} ms (${priceRun.n} answers; foreign CPU ${priceRun.foreignCpuPct}%)`,
  );
  const orderRun = await withForeignCpu(pids, () =>
    propagation(sims, () =>
      hq('POST', '/orders', {
        id: randomUUID(),
        orderType: 'TAKE_AWAY',
        buckets: [{ venue, lines: [{ productId: firstProduct, quantity: 1 }] }],
      }),
    ),
  );
  console.log(
    `  an order from headquarters to ${DEVICES} long polls of its venue: p50 ${orderRun.p50Ms} ms, p99 ${orderRun.p99Ms} ms, max ${orderRun.maxMs} ms (foreign CPU ${orderRun.foreignCpuPct}%)`,
  );
  results[name] = { snapshot, price: priceRun, order: orderRun };
}
console.log(JSON.stringify({ devices: DEVICES, rounds: ROUNDS, ...results }));
await stop(central.proc);
