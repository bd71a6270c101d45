// bench-fleet's server side: one PostgreSQL and one or three `central serve` processes on it, all niced on core 1
// (docs/sync.md "Running it"); what they cost (CPU of each group, RSS, PostgreSQL's connections) and what they log.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import pg from 'pg';
import { root, stop, treeOf } from './run.mjs';

const onCore1 = (args) => ['-n', '10', 'taskset', '-c', '1', process.execPath, ...args];

/** A line of JSON from `proc`'s stdout that `match` accepts; rejects when the process exits first. */
const firstLine = (proc, match) =>
  new Promise((resolve, reject) => {
    proc.once('exit', (code) => reject(new Error(`${proc.spawnargs.slice(6, 9).join(' ')} exited with ${code}`)));
    createInterface({ input: proc.stdout }).on('line', (line) => {
      if (!line.startsWith('{')) return;
      const entry = JSON.parse(line);
      if (match(entry)) resolve(entry);
    });
  });

/** The database (scripts/lib/fleet-pg.mjs) in `dir`; resolves with its process and URL. */
export async function startDatabase(started, dir) {
  const proc = spawn('nice', onCore1(['scripts/lib/fleet-pg.mjs', dir]), {
    cwd: root,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  started.push(proc);
  const { url } = await firstLine(proc, (e) => 'url' in e);
  return { proc, url };
}

export { freePort } from './run.mjs';

/**
 * `central serve --demo --database-url URL` on `port`; resolves once listening. Its warnings and errors are counted
 * by message into `logged` (a pool that timed out shows there as "request refused: the database is busy or away").
 */
export async function startCentralOn(started, { dataDir, port, url, logged }) {
  // CENTRAL_NODE_ARGS: flags for the centrals' node ("--cpu-prof --cpu-prof-dir=DIR" profiles each until it stops).
  const nodeArgs = (process.env.CENTRAL_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const args = [...nodeArgs, 'dist/main.cjs', 'central', 'serve', '--demo', '--database-url', url];
  args.push('--host', '127.0.0.1', '--port', String(port), '--data-dir', dataDir);
  const proc = spawn('nice', onCore1(args), { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] });
  started.push(proc);
  await firstLine(proc, (e) => {
    if (e.level >= 40 || e.level === 'warn' || e.level === 'error') logged[e.msg] = (logged[e.msg] ?? 0) + 1;
    return e.msg === 'central listening';
  });
  return { proc, port, base: `http://127.0.0.1:${port}` };
}

export { stop };

const ticksOf = (pid) => {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return { self: Number(f[11]) + Number(f[12]), children: Number(f[13]) + Number(f[14]) };
  } catch {
    return { self: 0, children: 0 };
  }
};
const treeTicks = (pids) => pids.flatMap(treeOf).reduce((s, p) => s + ticksOf(p).self + ticksOf(p).children, 0);
const cpuLine = () => readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);

/**
 * CPU of the centrals (a killed central's ticks move to this process's children when it is reaped, so they count
 * there), of the database, of this client, and foreign CPU: the machine's share used by none of them, as
 * scripts/lib/box.mjs withForeignCpu counts it. `meter()` now; `cpuBetween(a, b)`: % of one core each, foreign % of
 * the machine.
 */
export function cpuMeter(centralPids, databasePid) {
  return () => {
    const me = ticksOf(process.pid);
    return {
      at: performance.now(),
      stat: cpuLine(),
      central: treeTicks(centralPids()) + me.children,
      database: treeTicks([databasePid]),
      client: me.self,
    };
  };
}
export function cpuBetween(a, b) {
  const s = (b.at - a.at) / 1000;
  const pct = (k) => Math.round((b[k] - a[k]) / s); // 100 ticks a second (CLK_TCK)
  const busy = (l) => l.reduce((x, y) => x + y, 0) - l[3] - l[4];
  const total = b.stat.reduce((x, y) => x + y, 0) - a.stat.reduce((x, y) => x + y, 0);
  const ours = b.central + b.database + b.client - (a.central + a.database + a.client);
  const foreign = Math.max(0, Math.round((100 * (busy(b.stat) - busy(a.stat) - ours)) / total));
  return { centralPct: pct('central'), databasePct: pct('database'), clientPct: pct('client'), foreignPct: foreign };
}

const statusKb = (pid, field) => {
  try {
    return Number(new RegExp(`${field}:\\s+(\\d+)`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
  } catch {
    return 0;
  }
};
/** Resident MiB now and at its peak (VmHWM: since the process started). */
export const rssOf = (pid) => ({
  rssMiB: Math.round(statusKb(pid, 'VmRSS') / 1024),
  peakMiB: Math.round(statusKb(pid, 'VmHWM') / 1024),
});
/** The database's memory: the proportional set size of its processes (shared buffers counted once). */
export function databasePssMiB(databasePid) {
  let kb = 0;
  for (const p of treeOf(databasePid)) {
    try {
      kb += Number(/Pss:\s+(\d+)/.exec(readFileSync(`/proc/${p}/smaps_rollup`, 'utf8'))?.[1] ?? 0);
    } catch {
      // gone meanwhile
    }
  }
  return Math.round(kb / 1024);
}

/**
 * PostgreSQL's connections every 200 ms, from a connection of its own (not counted): `now` and `peak` of every
 * backend in pg_stat_activity and of the client backends among them, and `waits`: what the busy ones waited for,
 * counted over the samples; `resetPeak()` at each phase.
 */
export async function connectionSampler(url) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const state = { now: { all: 0, clients: 0 }, peak: { all: 0, clients: 0 }, waits: {} };
  let stopped = false;
  const loop = (async () => {
    for (let i = 0; i < 1_000_000 && !stopped; i++) {
      const { rows } = await client.query(
        `SELECT count(*)::int - 1 AS all, count(*) FILTER (WHERE backend_type = 'client backend')::int - 1 AS clients
         FROM pg_stat_activity`,
      );
      state.now = rows[0];
      state.peak = {
        all: Math.max(state.peak.all, rows[0].all),
        clients: Math.max(state.peak.clients, rows[0].clients),
      };
      // What the busy connections wait for, summed over the samples: a hot row shows as Lock:transactionid.
      const busy = await client.query(
        `SELECT state || ' ' || coalesce(wait_event_type || ':' || wait_event, 'running') AS w, count(*)::int AS n
         FROM pg_stat_activity
         WHERE backend_type = 'client backend' AND state <> 'idle' AND pid <> pg_backend_pid() GROUP BY 1`,
      );
      for (const r of busy.rows) state.waits[r.w] = (state.waits[r.w] ?? 0) + r.n;
      await new Promise((r) => setTimeout(r, 200));
    }
  })();
  return {
    state,
    resetPeak: () => {
      state.peak = { ...state.now };
      state.waits = {};
    },
    async close() {
      stopped = true;
      await loop;
      await client.end();
    },
  };
}
