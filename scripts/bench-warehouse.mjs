// Warehouse benchmark: starts the bundled box (dist/main.cjs) with the demo tenant in a temp data dir and, one
// request at a time, posts stock documents of 1, 100 and 2048 items and queries the stock of 2048 items.
// Prints per-operation p50/p99 latency and items/s; the last line is one JSON object with the same figures.
// Usage: npm run bench:warehouse   (or: node scripts/bench-warehouse.mjs after npm run build)
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { demo, quantile, startBox, token } from './lib/box.mjs';

const warehouse = demo.warehouses[0].id;

async function staffHeaders(base) {
  const staff = await token(base, demo.users[0].username, demo.users[0].password);
  return {
    authorization: `Bearer ${staff.access_token}`,
    'x-tenant': demo.id,
    'x-user': staff.UUID,
    'content-type': 'application/json',
  };
}

const items = (n, qty) =>
  Array.from({ length: n }, (_, i) => ({ id: `bench-${i}`, unit: 'kg', qty, unitPrice: 1.5, total: 1.5 * qty }));

async function measure(name, runs, itemsPerRun, request, expected) {
  for (let i = 0; i < 3; i++) await request(-1 - i); // warm-up
  const times = [];
  const started = performance.now();
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    const res = await request(i);
    await res.arrayBuffer();
    times.push(performance.now() - t0);
    if (res.status !== expected) throw new Error(`${name}: status ${res.status}`);
  }
  const seconds = (performance.now() - started) / 1000;
  times.sort((a, b) => a - b);
  const r = (x) => Math.round(x * 100) / 100;
  return {
    name,
    runs,
    items: itemsPerRun,
    p50Ms: r(quantile(times, 0.5)),
    p99Ms: r(quantile(times, 0.99)),
    itemsPerSec: Math.round((runs * itemsPerRun) / seconds),
  };
}

const dataDir = mkdtempSync(join(tmpdir(), 'vb-bench-wh-'));
const { proc, base } = await startBox(dataDir);
try {
  const headers = await staffHeaders(base);
  const url = (rest) => `${base}/warehouse-api/api/warehouse/${warehouse}${rest}`;
  const post = (rest, body) => fetch(url(rest), { method: 'POST', headers, body: JSON.stringify(body) });
  const bodies = { 1: items(1, 1000), 100: items(100, 1000), 2048: items(2048, 1000) };
  const issue = items(2048, 0.001);
  const ids = bodies[2048].map((i) => i.id);
  const results = [
    await measure('PZ 1 item', 300, 1, () => post('/documents/pz', { items: bodies[1] }), 201),
    await measure('PZ 100 items', 100, 100, () => post('/documents/pz', { items: bodies[100] }), 201),
    await measure('PZ 2048 items', 30, 2048, () => post('/documents/pz', { items: bodies[2048] }), 201),
    await measure('WZ 2048 items', 30, 2048, () => post('/documents/wz', { items: issue }), 201),
    await measure('stock 2048 items', 100, 2048, () => post('/stock', { items: ids }), 200),
  ];
  for (const r of results) {
    console.log(
      `${r.name.padEnd(18)} runs ${String(r.runs).padStart(4)}  p50 ${r.p50Ms.toFixed(2).padStart(7)} ms  p99 ${r.p99Ms.toFixed(2).padStart(7)} ms  ${String(r.itemsPerSec).padStart(8)} items/s`,
    );
  }
  console.log(
    JSON.stringify({
      bench: 'warehouse',
      node: process.version,
      cpus: cpus().length,
      cpu: cpus()[0]?.model,
      results,
    }),
  );
} finally {
  proc.kill('SIGTERM');
  await new Promise((r) => proc.once('exit', r));
  rmSync(dataDir, { recursive: true, force: true });
}
