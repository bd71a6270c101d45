// Sync figures (docs/sync.md "Sync to the central node"), on this machine, printed, never asserted:
//  1. drain rate: a box with a backlog (its central was down for ORDERS orders of a busy day) sends it all;
//  2. the box's order latency while that backlog drains, against the same load with nothing to send;
//  3. central ingest with DEVICES simulated boxes uploading at once: events/s, batch p50/p99, 429s.
// The box's event loop runs alone on core 0 (its other threads on core 1); the central and its PostgreSQL run on
// core 1, niced; the load generator (this process) runs on core 1 in (1) and (2), where the niced central yields
// to it, and on core 0, alone, in (3) (the box is stopped by then).
import { execFileSync, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadSimDevice } from './lib/sim-device.mjs';
import { demo, orderLoad, pinBox, quantile, startBox, token, withForeignCpu } from './lib/box.mjs';
import { benchRun, cli, root, startCentral, stop, treeOf } from './lib/run.mjs';
import { driveVenueDay } from './lib/venue-day.mjs';

const ORDERS = Number(process.env.ORDERS ?? 1500);
const DEVICES = Number(process.env.DEVICES ?? 100);
const BATCHES = Number(process.env.BATCHES ?? 2);
const RATE = Number(process.env.RATE ?? 100); // order commands/s during the latency runs
const W = demo.warehouses.map((w) => w.id);
/**
 * A free port below the ephemeral range: the central comes back on the same port after its outage, and a port
 * that port 0 handed out may meanwhile be taken by some client connection's local end.
 */
async function freePort() {
  const { createServer } = await import('node:net');
  for (;;) {
    const port = 20_000 + Math.floor(Math.random() * 10_000);
    const ok = await new Promise((resolve) => {
      const s = createServer()
        .once('error', () => resolve(false))
        .listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
    });
    if (ok) return port;
  }
}

const startCentralOn = async (dataDir, port) => startCentral(started, dataDir, { port: port ?? (await freePort()) });
const status = (dataDir) => JSON.parse(cli(['sync', 'status', '--data-dir', dataDir, '--json']));
/** The measured processes: the box, the central with its PostgreSQL, and this load generator. */
const allPids = (procs) => () => [process.pid, ...procs.flatMap((p) => treeOf(p.pid))];

/** The order load of (1) and (2): a staff user's order/new at RATE/s; confirmation latency p50/p99 in ms. */
async function orderP99(base, seconds) {
  const { access_token: t } = await token(base, 'kelner', 'kelner-demo-1');
  const lat = await orderLoad(base, t, RATE, seconds);
  return { p50Ms: +quantile(lat, 0.5).toFixed(2), p99Ms: +quantile(lat, 0.99).toFixed(2), n: lat.length };
}

const { started, tmp } = benchRun();

const pin = (core) => execFileSync('taskset', ['-apc', String(core), String(process.pid)], { stdio: 'ignore' });

// ---- 1 and 2: one box, one central.
pin(1);
const centralDir = tmp('vb-bench-central-');
let central = await startCentralOn(centralDir);
const boxDir = tmp('vb-bench-box-');
// Short retry delays: the drain starts within a second of the central's return (the default backoff may wait
// minutes after a long outage), so the order load below runs while the backlog drains.
const boxConfig = join(tmp('vb-bench-config-'), 'box.json');
writeFileSync(boxConfig, JSON.stringify({ sync: { retryMinMs: 200, retryMaxMs: 1000 } }));
const box = await startBox(boxDir, ['--config', boxConfig]);
started.push(box.proc);
// The box's event loop on core 0, its other threads beside the niced central and this client on core 1
// (scripts/lib/box.mjs pinBox); again before each measurement, as threads start lazily.
const pinEventLoop = () => pinBox(box.proc.pid);
const code = cli(['central', 'enrol', '--data-dir', centralDir, '--tenant', demo.id, '--venue', demo.venues[0].id]);
cli(['sync', 'enrol', '--data-dir', boxDir, '--central', central.base, '--code', code]);
await new Promise((r) => setTimeout(r, 6000)); // the box finds its device file within 5 s

pinEventLoop();
console.log('idle: the order load with nothing to send...');
const idle = await withForeignCpu(allPids([box.proc, central.proc]), () => orderP99(box.base, 10));
console.log(`  p50 ${idle.p50Ms} ms, p99 ${idle.p99Ms} ms (${idle.n} orders, foreign CPU ${idle.foreignCpuPct}%)`);

console.log(`central down: driving ${ORDERS} orders of a busy day into the box...`);
await stop(central.proc);
const port = central.port;
await driveVenueDay(box.base, { orders: ORDERS, documents: Math.round(ORDERS / 10), warehouses: [W[0], W[1]] });
const backlog = status(boxDir).backlog;
console.log(`  backlog ${backlog} events`);

// The central comes back on the port the box knows.
central = await startCentralOn(centralDir, port);
pinEventLoop();
const drainStart = performance.now();
console.log('draining, with the same order load on the box meanwhile...');
const during = await withForeignCpu(allPids([box.proc, central.proc]), async () => {
  const load = orderP99(box.base, 10);
  const r = await load;
  return { ...r, backlogAfterLoad: status(boxDir).backlog };
});
for (;;) {
  const s = status(boxDir);
  if (s.backlog === 0) break;
  await new Promise((r) => setTimeout(r, 200));
}
const drainS = (performance.now() - drainStart) / 1000;
const drainRate = Math.round((backlog + RATE * 10) / drainS);
console.log(`  drained ${backlog} + ${RATE * 10} events in ${drainS.toFixed(1)} s: ${drainRate} events/s`);
console.log(
  `  order p50 ${during.p50Ms} ms, p99 ${during.p99Ms} ms while draining (backlog still ${during.backlogAfterLoad} after the load; foreign CPU ${during.foreignCpuPct}%)`,
);
await stop(box.proc);
await stop(central.proc);

// ---- 3: DEVICES simulated boxes at once against a fresh central.
pin(0);
const { SimDevice } = await loadSimDevice();
const hqDir = tmp('vb-bench-central-');
central = await startCentralOn(hqDir);
console.log(`${DEVICES} simulated boxes, ${BATCHES} batches of 500 events each, all at once...`);
const sims = [];
for (let i = 0; i < DEVICES; i += 10) {
  const codes = await Promise.all(
    Array.from(
      { length: Math.min(10, DEVICES - i) },
      () =>
        new Promise((resolve, reject) => {
          const p = spawn(
            process.execPath,
            [
              'dist/main.cjs',
              'central',
              'enrol',
              '--data-dir',
              hqDir,
              '--tenant',
              demo.id,
              '--venue',
              demo.venues[0].id,
            ],
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
    await d.enrol(c);
    for (let n = 0; n < BATCHES * 500; n++) d.order();
    sims.push(d);
  }
}
const batchesSigned = sims.map((d) => Array.from({ length: BATCHES }, (_, b) => d.batch(b * 500 + 1, (b + 1) * 500)));
const batchLatency = [];
const statuses = new Map();
const ingest = await withForeignCpu(allPids([central.proc]), async () => {
  const started = performance.now();
  await Promise.all(
    sims.map(async (d, i) => {
      for (let b = 0; b < BATCHES; ) {
        const t0 = performance.now();
        const a = await d.post(batchesSigned[i][b]);
        statuses.set(a.status, (statuses.get(a.status) ?? 0) + 1);
        if (a.status === 429) {
          await new Promise((r) => setTimeout(r, Number(a.headers.get('retry-after') ?? '1') * 1000 * Math.random()));
          continue;
        }
        if (a.status !== 200) throw new Error(`batch: ${a.status} ${JSON.stringify(a.body)}`);
        batchLatency.push(performance.now() - t0);
        b++;
      }
    }),
  );
  return { seconds: (performance.now() - started) / 1000 };
});
batchLatency.sort((a, b) => a - b);
const ingestRate = Math.round((DEVICES * BATCHES * 500) / ingest.seconds);
console.log(
  `  ${DEVICES * BATCHES * 500} events in ${ingest.seconds.toFixed(1)} s: ${ingestRate} events/s; batch p50 ${quantile(batchLatency, 0.5).toFixed(0)} ms, p99 ${quantile(batchLatency, 0.99).toFixed(0)} ms; answers ${JSON.stringify(Object.fromEntries(statuses))} (foreign CPU ${ingest.foreignCpuPct}%)`,
);
await stop(central.proc);

console.log(
  JSON.stringify({
    drainEventsPerSecond: drainRate,
    backlog,
    drainSeconds: +drainS.toFixed(1),
    idleOrderP99Ms: idle.p99Ms,
    drainingOrderP99Ms: during.p99Ms,
    idleOrderP50Ms: idle.p50Ms,
    drainingOrderP50Ms: during.p50Ms,
    ingestEventsPerSecond: ingestRate,
    ingestBatchP99Ms: +quantile(batchLatency, 0.99).toFixed(0),
    devices: DEVICES,
    answers: Object.fromEntries(statuses),
    foreignCpuPct: { idle: idle.foreignCpuPct, draining: during.foreignCpuPct, ingest: ingest.foreignCpuPct },
  }),
);
