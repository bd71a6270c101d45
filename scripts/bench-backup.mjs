// The scheduled backup beside a serving box (docs/operations.md "Backups and restore"). Builds a realistic database
// (ORDERS orders with their whole lifecycle, lib/venue-day.mjs: ~32 MiB for 200), then restarts the box on it with
// a backup every 6 s and drives order/new at RATE/s as a waiter for SECONDS. Prints each backup's time, the box's
// largest event-loop delay while it ran (logged by the box), and order latency inside and outside the backups.
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { orderLoad, quantile, startBox, token } from './lib/box.mjs';
import { driveVenueDay } from './lib/venue-day.mjs';

const ORDERS = Number(process.env.ORDERS ?? 200);
const RATE = Number(process.env.RATE ?? 50);
const SECONDS = Number(process.env.SECONDS ?? 30);
const dataDir = mkdtempSync(join(tmpdir(), 'vb-bench-backup-'));
const configFile = `${dataDir}-config.json`;

try {
  let box = await startBox(dataDir);
  await driveVenueDay(box.base, { orders: ORDERS, documents: 0, warehouses: [] });
  await new Promise((r) => setTimeout(r, 500));
  await stop(box.proc);
  const dbBytes = statSync(join(dataDir, 'venue-box.db')).size;

  writeFileSync(configFile, JSON.stringify({ backup: { schedule: '*/6 * * * * *' } }));
  box = await startBox(dataDir, ['--config', configFile]);
  const backups = [];
  createInterface({ input: box.proc.stdout }).on('line', (line) => {
    const e = JSON.parse(line);
    if (e.msg === 'backup written' || e.msg === 'backup failed') backups.push({ ...e, endMs: Date.parse(e.time) });
  });
  const staff = await token(box.base, 'kelner', 'kelner-demo-1');
  const t0 = Date.now();
  const timed = await orderLoadTimed(box.base, staff.access_token, RATE, SECONDS);
  await stop(box.proc);

  const windows = backups.filter((b) => b.msg === 'backup written').map((b) => [b.endMs - b.ms, b.endMs]);
  const inside = timed
    .filter((l) => windows.some(([a, z]) => l.at >= a && l.at <= z))
    .map((l) => l.ms)
    .sort((a, b) => a - b);
  const outside = timed
    .filter((l) => !windows.some(([a, z]) => l.at >= a && l.at <= z))
    .map((l) => l.ms)
    .sort((a, b) => a - b);
  const stats = (xs) => ({
    n: xs.length,
    p50: round(quantile(xs, 0.5)),
    p99: round(quantile(xs, 0.99)),
    max: round(xs.at(-1)),
  });
  console.log(
    JSON.stringify({
      dbMiB: round(dbBytes / 1_048_576),
      rate: RATE,
      seconds: SECONDS,
      startedAt: t0,
      backups: backups.map((b) => ({ msg: b.msg, ms: b.ms, loopDelayMaxMs: b.loopDelayMaxMs, error: b.error })),
      latencyDuringBackupMs: stats(inside),
      latencyOtherwiseMs: stats(outside),
    }),
  );
} finally {
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(configFile, { force: true });
}

/** orderLoad, with each request's due time kept (epoch ms) to place it inside or outside a backup. */
async function orderLoadTimed(base, accessToken, rate, seconds) {
  const originNow = Date.now() - performance.now();
  const out = [];
  const origFetch = globalThis.fetch;
  globalThis.fetch = (url, init) => {
    const at = originNow + performance.now();
    return origFetch(url, init).then((res) => {
      out.push({ at, ms: originNow + performance.now() - at });
      return res;
    });
  };
  try {
    await orderLoad(base, accessToken, rate, seconds);
  } finally {
    globalThis.fetch = origFetch;
  }
  return out;
}

function stop(proc) {
  const exited = new Promise((r) => proc.once('exit', r));
  proc.kill('SIGTERM');
  return exited;
}

function round(x) {
  return Math.round(x * 10) / 10;
}
