// Sync figures (docs/sync.md "Sync to the central node"), on this machine, printed, never asserted:
//  1. drain rate: a box with a backlog (its central was down for ORDERS orders of a busy day) sends it all;
//  2. the box's order latency while that backlog drains, against the same load with nothing to send;
//  3. central ingest with DEVICES simulated boxes uploading at once: events/s, batch p50/p99, 429s.
// The box's event loop runs alone on core 0 (its other threads on core 1); the central and its PostgreSQL run on
// core 1, niced; the load generator (this process) runs on core 1 in (1) and (2), where the niced central yields
// to it, and on core 0, alone, in (3) (the box is stopped by then).
import { execFileSync, spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadSimDevice } from './lib/sim-device.mjs';
import { demo, orderLoad, pinBox, quantile, startBox, token, withForeignCpu } from './lib/box.mjs';
import { benchRun, cli, freePort, root, startCentral, stop, treeOf } from './lib/run.mjs';
import { driveVenueDay } from './lib/venue-day.mjs';
import { between, histograms } from './lib/box-metrics.mjs';

const ORDERS = Number(process.env.ORDERS ?? 1500);
const DEVICES = Number(process.env.DEVICES ?? 100);
const BATCHES = Number(process.env.BATCHES ?? 2);
const RATE = Number(process.env.RATE ?? 100); // order commands/s during the latency runs
const W = demo.warehouses.map((w) => w.id);

const startCentralOn = async (dataDir, port) => startCentral(started, dataDir, { port: port ?? (await freePort()) });
const status = (dataDir) => JSON.parse(cli(['sync', 'status', '--data-dir', dataDir, '--json']));
/** The measured processes: the box, the central with its PostgreSQL, and this load generator. */
const allPids = (procs) => () => [process.pid, ...procs.flatMap((p) => treeOf(p.pid))];

/**
 * The order load of (1) and (2): a staff user's order/new at RATE/s for `seconds`, while `watch` polls the box's
 * sync status every 100 ms (in both runs, so both carry its cost). Confirmation latency p50/p99 in ms, over all
 * orders and over those due before `watch` said the backlog was drained (`drainedAt`, performance.now()).
 */
async function orderP99(base, seconds, watch = () => false) {
  const { access_token: t } = await token(base, 'kelner', 'kelner-demo-1');
  const due = [];
  const origFetch = globalThis.fetch;
  globalThis.fetch = (url, init) => {
    const at = performance.now();
    return origFetch(url, init).then((res) => {
      due.push({ at, ms: performance.now() - at });
      return res;
    });
  };
  let drainedAt;
  let loading = true;
  const polling = (async () => {
    while (drainedAt === undefined && loading) {
      const res = await origFetch(`${base}/sync-api/api/status`, { headers: { authorization: `Bearer ${t}` } });
      if (watch(await res.json())) drainedAt = performance.now();
      else await new Promise((r) => setTimeout(r, 100));
    }
  })();
  let lat;
  try {
    lat = await orderLoad(base, t, RATE, seconds);
  } finally {
    globalThis.fetch = origFetch;
    loading = false;
  }
  await polling;
  const inDrain = due
    .filter((d) => drainedAt === undefined || d.at <= drainedAt)
    .map((d) => d.ms)
    .sort((a, b) => a - b);
  const q = (xs, p) => +quantile(xs, p).toFixed(2);
  return {
    p50Ms: q(lat, 0.5),
    p99Ms: q(lat, 0.99),
    n: lat.length,
    drainedAt,
    inDrain: { p50Ms: q(inDrain, 0.5), p99Ms: q(inDrain, 0.99), n: inDrain.length },
  };
}

/** CPU seconds used so far by a process (all its threads), by its descendants, and by the box. */
const ticksOf = (pid) => {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return Number(f[11]) + Number(f[12]);
  } catch {
    return 0;
  }
};
const HZ = 100;
const cpuSplit = (boxPid, centralPid) => ({
  box: ticksOf(boxPid) / HZ,
  central: ticksOf(centralPid) / HZ,
  postgres:
    treeOf(centralPid)
      .slice(1)
      .reduce((s, p) => s + ticksOf(p), 0) / HZ,
});

const { started, tmp } = benchRun();

/** This process's threads onto `core`; again when one of them ended while taskset walked them (taskset fails). */
const pin = (core) => {
  for (let attempt = 1; ; attempt++) {
    try {
      execFileSync('taskset', ['-apc', String(core), String(process.pid)], { stdio: 'ignore' });
      return;
    } catch (err) {
      if (attempt === 5) throw err;
    }
  }
};

// ---- 1 and 2: one box, one central.
pin(1);
// CENTRAL_DIR=/dev/shm puts the central's PostgreSQL on a tmpfs: at a venue the central is another machine, and
// here its fsyncs would share the box's disk (docs/performance.md "Draining a busy day at 5,000 events/s").
const centralDir = tmp('vb-bench-central-', process.env.CENTRAL_DIR);
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
const staff = (await token(box.base, 'kelner', 'kelner-demo-1')).access_token;
/** The box's own histograms that say where an order's time went (printed per phase: docs/performance.md). */
const BOX_TIMES = [
  'venue_box_queue_transaction_duration_seconds',
  'venue_box_queue_commit_duration_seconds',
  'venue_box_wal_fsync_duration_seconds',
  'venue_box_wal_checkpoint_duration_seconds',
  'venue_box_wal_restart_hold_seconds',
];
let boxBefore = await histograms(box.base, staff);
const idle = await withForeignCpu(allPids([box.proc, central.proc]), () => orderP99(box.base, 10));
console.log(`  p50 ${idle.p50Ms} ms, p99 ${idle.p99Ms} ms (${idle.n} orders, foreign CPU ${idle.foreignCpuPct}%)`);
console.log(
  `  the box's own times: ${JSON.stringify(between(boxBefore, await histograms(box.base, staff), BOX_TIMES))}`,
);

console.log(`central down: driving ${ORDERS} orders of a busy day into the box...`);
await stop(central.proc);
const port = central.port;
await driveVenueDay(box.base, { orders: ORDERS, documents: Math.round(ORDERS / 10), warehouses: [W[0], W[1]] });
const backlog = status(boxDir).backlog;
console.log(`  backlog ${backlog} events`);

// The central comes back on the port the box knows. The drain is timed from then until the central acknowledged
// the whole backlog (the orders taken meanwhile interleave with it: every event acknowledged by then counts).
// It is also timed from the box's first answer from the central (its hello, after up to sync.retryMaxMs of backoff).
const { newestSeq: target, ackedSeq: ackedBefore, lastSuccessAt: contactBefore } = status(boxDir);
boxBefore = await histograms(box.base, staff);
central = await startCentralOn(centralDir, port);
pinEventLoop();
const drainStart = performance.now();
const cpuBefore = cpuSplit(box.proc.pid, central.proc.pid);
let cpuDrain;
let ackedAtDrained = 0;
let contactAt;
console.log('draining, with the same order load on the box meanwhile...');
const during = await withForeignCpu(allPids([box.proc, central.proc]), async () => {
  const r = await orderP99(box.base, 10, (s) => {
    if (contactAt === undefined && s.lastSuccessAt !== contactBefore) contactAt = performance.now();
    if (s.ackedSeq < target) return false;
    cpuDrain = cpuSplit(box.proc.pid, central.proc.pid);
    ackedAtDrained = s.ackedSeq;
    return true;
  });
  return {
    ...r,
    backlogAfterLoad: status(boxDir).backlog,
    boxTimes: between(boxBefore, await histograms(box.base, staff), BOX_TIMES),
  };
});
let drainEnd = during.drainedAt;
while (drainEnd === undefined) {
  const s = status(boxDir);
  if (s.ackedSeq >= target) {
    drainEnd = performance.now();
    cpuDrain = cpuSplit(box.proc.pid, central.proc.pid);
    ackedAtDrained = s.ackedSeq;
  } else await new Promise((r) => setTimeout(r, 100));
}
const drainS = (drainEnd - drainStart) / 1000;
const drainRate = Math.round((ackedAtDrained - ackedBefore) / drainS);
const contactS = ((contactAt ?? drainStart) - drainStart) / 1000;
const drainRateFromContact = Math.round((ackedAtDrained - ackedBefore) / (drainS - contactS));
const cpuUsed = Object.fromEntries(Object.entries(cpuDrain).map(([k, v]) => [k, +(v - cpuBefore[k]).toFixed(1)]));
console.log(
  `  drained ${ackedAtDrained - ackedBefore} events (the backlog of ${backlog} and orders taken meanwhile) in ${drainS.toFixed(1)} s: ${drainRate} events/s; the box's first contact after ${contactS.toFixed(1)} s, ${drainRateFromContact} events/s from there; CPU s meanwhile ${JSON.stringify(cpuUsed)}`,
);
console.log(
  `  order p50 ${during.p50Ms} ms, p99 ${during.p99Ms} ms over the 10 s load; p50 ${during.inDrain.p50Ms} ms, p99 ${during.inDrain.p99Ms} ms over the ${during.inDrain.n} orders due while the backlog drained (backlog ${during.backlogAfterLoad} after the load; foreign CPU ${during.foreignCpuPct}%)`,
);
console.log(`  the box's own times over the load: ${JSON.stringify(during.boxTimes)}`);
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
    drainEventsPerSecondFromContact: drainRateFromContact,
    firstContactSeconds: +contactS.toFixed(1),
    idleOrderP99Ms: idle.p99Ms,
    drainingOrderP99Ms: during.p99Ms,
    idleOrderP50Ms: idle.p50Ms,
    drainingOrderP50Ms: during.p50Ms,
    inDrainOrderP99Ms: during.inDrain.p99Ms,
    inDrainOrders: during.inDrain.n,
    drainCpuS: cpuUsed,
    ingestEventsPerSecond: ingestRate,
    ingestBatchP99Ms: +quantile(batchLatency, 0.99).toFixed(0),
    devices: DEVICES,
    answers: Object.fromEntries(statuses),
    foreignCpuPct: { idle: idle.foreignCpuPct, draining: during.foreignCpuPct, ingest: ingest.foreignCpuPct },
  }),
);
