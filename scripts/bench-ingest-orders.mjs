// What the report facts cost the ingest (docs/performance.md "HQ reports and searches"), printed, never asserted:
// DEVICES simulated boxes over the demo's three venues each send BATCHES batches of 500 order events at once to a
// fresh central (niced, core 1): orders of one to four lines moving NEW, ORDERED, READY, COMPLETED (one in ten
// CANCELLED after ORDERED), one event per version, as a venue's day sends them. Events/s and batch p50/p99, as
// bench-sync's central phase counts them. Runs against any build of the central (the one before the facts too),
// so the two can be compared in one sitting. Run: `node scripts/bench-ingest-orders.mjs` after `npm run build`.
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { demo, quantile, withForeignCpu } from './lib/box.mjs';
import { benchRun, cli, startCentral, stop, treeOf } from './lib/run.mjs';
import { loadSimDevice } from './lib/sim-device.mjs';

const DEVICES = Number(process.env.DEVICES ?? 30);
const BATCHES = Number(process.env.BATCHES ?? 2);

const { started, tmp } = benchRun();
execFileSync('taskset', ['-apc', '0', String(process.pid)], { stdio: 'ignore' });
const { SimDevice } = await loadSimDevice('bench-ingest-sim-device');
const dataDir = tmp('vb-bench-ingest-');
const central = await startCentral(started, dataDir);
const products = demo.menus[0].root.items.flatMap((c) => c.items);
const STEPS = ['NEW', 'ORDERED', 'READY', 'COMPLETED'];

const sims = [];
for (let i = 0; i < DEVICES; i++) {
  const venue = demo.venues[i % demo.venues.length].id;
  const code = cli(['central', 'enrol', '--data-dir', dataDir, '--tenant', demo.id, '--venue', venue]);
  const d = new SimDevice(central.base);
  const res = await d.enrol(code);
  if (res.status !== 201) throw new Error(`enrol: ${res.status}`);
  let t = Date.now() - 3_600_000;
  while (d.lastSeq < BATCHES * 500) {
    const id = randomUUID();
    t += 20_000;
    const created = new Date(t).toISOString();
    const lines = Array.from({ length: 1 + (d.lastSeq % 4) }, (_, k) => {
      const p = products[(d.lastSeq + k * 5) % products.length];
      return {
        id: `${id}-${k}`,
        productId: p.id,
        quantity: 1 + (k % 2),
        price: p.price,
        status: 'ORDERED',
        product: { id: p.id, details: { literals: { name: p.details.literals.name } } },
      };
    });
    const steps = d.lastSeq % 10 === 0 ? ['NEW', 'ORDERED', 'CANCELLED'] : STEPS;
    for (const [v, status] of steps.entries()) {
      if (d.lastSeq >= BATCHES * 500) break;
      const at = new Date(Date.parse(created) + v * 240_000).toISOString();
      d.append('order.changed', id, {
        version: v + 1,
        command: { correlationId: randomUUID(), kind: 'k', userId: 'u', staff: true, confirmedAt: at },
        order: {
          id,
          tenant: demo.id,
          created,
          lastChanged: at,
          status,
          orderType: 'TAKE_AWAY',
          source: 'KIOSK',
          total: '0.00',
          buckets: [
            { venue, lines: lines.map((l) => ({ ...l, status: status === 'CANCELLED' ? 'CANCELLED' : 'ORDERED' })) },
          ],
        },
        detail: {
          contact: v % 3 === 0 ? { name: 'Anna Nowak', phone: '+48 600 100 200' } : null,
          extra: null,
          rounds: 1,
          lineRounds: {},
        },
      });
    }
  }
  sims.push(d);
}

const batches = sims.map((d) => Array.from({ length: BATCHES }, (_, b) => d.batch(b * 500 + 1, (b + 1) * 500)));
const latency = [];
const answers = new Map();
const pids = () => [process.pid, ...treeOf(central.proc.pid)];
const run = await withForeignCpu(pids, async () => {
  const t0 = performance.now();
  await Promise.all(
    sims.map(async (d, i) => {
      for (let b = 0; b < BATCHES; ) {
        const t = performance.now();
        const a = await d.post(batches[i][b]);
        answers.set(a.status, (answers.get(a.status) ?? 0) + 1);
        if (a.status === 429) {
          await new Promise((r) => setTimeout(r, Number(a.headers.get('retry-after') ?? '1') * 1000 * Math.random()));
          continue;
        }
        if (a.status !== 200) throw new Error(`batch: ${a.status} ${JSON.stringify(a.body)}`);
        if (a.body.deadLetters.length > 0) throw new Error(`dead letters: ${JSON.stringify(a.body.deadLetters)}`);
        latency.push(performance.now() - t);
        b++;
      }
    }),
  );
  return { seconds: (performance.now() - t0) / 1000 };
});
latency.sort((a, b) => a - b);
console.log(
  JSON.stringify({
    devices: DEVICES,
    events: DEVICES * BATCHES * 500,
    eventsPerSecond: Math.round((DEVICES * BATCHES * 500) / run.seconds),
    batchP50Ms: Math.round(quantile(latency, 0.5)),
    batchP99Ms: Math.round(quantile(latency, 0.99)),
    answers: Object.fromEntries(answers),
    foreignCpuPct: run.foreignCpuPct,
  }),
);
await stop(central.proc);
