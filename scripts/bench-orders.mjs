// `npm run bench`: order command latency, throughput and cost of a real box (docs/operations.md "Durability and
// speed"). The box (dist/main.cjs, every thread) runs on core 0; the load generator (scripts/lib/order-client.mjs,
// raw keep-alive HTTP and `ws`, a process of its own) and this script on core 1. For each rate of RATES, SOCKETS
// new anonymous users open their sockets, then `order/new` (one line) goes out open loop for SECONDS, round robin
// over them, until a rate is not sustained (fewer than 95% of its commands a second pushed, or any lost).
// One JSON line per rate: push latency (from writing a command to its ORDER_CHANGE on the user's socket)
// p50/p99/max, the 200's p99, the send lag's p99 (a command written later than due: the client's timer, or no
// free connection because the server fell behind), commands/s achieved, the server's CPU per command (all its
// threads, and its event loop's thread alone), its event-loop delay p99 and max, WAL frames (pages) and write
// transactions per command (read from the WAL index in the -shm file, the same way for both servers), the bytes
// per command the server sent toward the disk (/proc/PID/io write_bytes: the WAL and the checkpoints, counted up
// to 2 s after the rate's last command), the box's mean fdatasync of the WAL (from its metrics), RSS, the
// machine's foreign CPU (anything else that ran meanwhile), and what the rate's users cost to set up: the
// server's CPU for a token and a socket, and the RSS 1,000 of them added.
// `--peer` runs the same load against scripts/lib/bench-peer.mjs (Fastify + ws + better-sqlite3 doing the same
// SQLite work), rate by rate after the box, so the two are compared in one run.
import { execFileSync, fork, spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync, readSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { demo, quantile, startBox, withForeignCpu } from './lib/box.mjs';
import { benchRun, root, stop } from './lib/run.mjs';

const SOCKETS = Number(process.env.SOCKETS ?? 1000);
const RATES = (process.env.RATES ?? '25,50,100,200,300,500,750,1000,1500,2000,3000,4000').split(',').map(Number);
const SECONDS = Number(process.env.SECONDS ?? 20);
const VENUE = demo.venues[0].id;
const { started, tmp } = benchRun();
const two = Number(execFileSync('nproc', { encoding: 'utf8' })) >= 2;
const pin = (pid, core) => two && execFileSync('taskset', ['-apc', String(core), String(pid)], { stdio: 'ignore' });
pin(process.pid, 1);

/** Anonymous users from one address and their open orders far past the defaults meant for a venue's guests. */
async function box() {
  const dataDir = tmp('vb-bench-');
  const configFile = join(dataDir, 'bench.json');
  writeFileSync(
    configFile,
    JSON.stringify({
      auth: { anonymous: { perAddressPerMinute: 100_000 } },
      ordering: {
        maxOpenPerAnonymousUser: 10_000,
        customerCommandRate: { burst: 1_000_000 },
        // Load, not abuse: no write budget (docs/orders.md "Order limits").
        addressWriteRate: { burstBytes: 1 << 30, bytesPerMinute: 1 << 30 },
        venueWriteRate: { burstBytes: 1 << 30, bytesPerMinute: 1 << 30 },
      },
      metrics: { allowAddresses: ['127.0.0.1'] },
    }),
  );
  const { proc, base } = await startBox(join(dataDir, 'data'), ['--config', configFile], two ? { core: 0 } : {});
  started.push(proc);
  /** The box's /metrics now: a sample's value by its name (NaN when absent). */
  const metrics = async () => {
    const text = await (await fetch(`${base}/metrics`)).text();
    return (name) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? NaN);
  };
  // The checkpointer's thread starts at the first checkpoint due (the start's own writes, about half a second in):
  // waited for here, so that its memory and start are not counted as the first 1,000 users'.
  for (const until = Date.now() + 5000; Date.now() < until; await new Promise((r) => setTimeout(r, 100))) {
    if ((await metrics())('venue_box_wal_checkpoint_duration_seconds_count') >= 1) break;
  }
  const loop = async () => {
    const value = await metrics();
    return {
      p99Ms: 1000 * value('venue_box_event_loop_delay_p99_seconds'),
      maxMs: 1000 * value('venue_box_event_loop_delay_max_seconds'),
      fsyncs: value('venue_box_wal_fsync_duration_seconds_count'),
      fsyncSeconds: value('venue_box_wal_fsync_duration_seconds_sum'),
    };
  };
  return {
    name: 'venue-box',
    proc,
    base,
    shm: join(dataDir, 'data', 'venue-box.db-shm'),
    tokenPath: '/auth-oauth2/oauth/token',
    loop,
  };
}

async function peer() {
  const dataDir = tmp('vb-bench-peer-');
  const proc = spawn(
    process.execPath,
    ['scripts/lib/bench-peer.mjs', '--port', '0', '--host', '127.0.0.1', '--data-dir', dataDir],
    {
      cwd: root,
      env: { ...process.env, GLIBC_TUNABLES: 'glibc.malloc.mmap_threshold=131072' },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  started.push(proc);
  const port = await new Promise((resolve, reject) => {
    proc.once('exit', (code) => reject(new Error(`peer exited with ${code}`)));
    createInterface({ input: proc.stdout }).on('line', (line) => {
      if (JSON.parse(line).msg === 'peer listening') resolve(JSON.parse(line).port);
    });
  });
  const base = `http://127.0.0.1:${port}`;
  const loop = async () => (await fetch(`${base}/bench/loop`)).json();
  return {
    name: 'fastify-peer',
    proc,
    base,
    shm: join(dataDir, 'peer.db-shm'),
    tokenPath: '/auth-oauth2/oauth/token',
    loop,
  };
}

/** A client process on core 1, driven over IPC. */
function client() {
  const proc = fork(join(root, 'scripts/lib/order-client.mjs'), { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  started.push(proc);
  pin(proc.pid, 1);
  const call = (msg) =>
    new Promise((resolve, reject) => {
      proc.once('message', (m) => (m.ok ? resolve(m.result) : reject(new Error(m.error))));
      proc.send(msg);
    });
  return { proc, call };
}

/**
 * Counts WAL frames and write transactions from the WAL index header (the -shm file's first 48 bytes: iChange,
 * a u32 counting transactions, at 8; mxFrame, the WAL's last valid frame, at 16). A checkpoint lets the next
 * writer restart the WAL at frame 1: a smaller mxFrame than last time means frames since the restart.
 */
function walCounter(file) {
  const fd = openSync(file, 'r');
  const header = Buffer.alloc(20);
  const read = () => {
    readSync(fd, header, 0, 20, 0);
    return { change: header.readUInt32LE(8), frame: header.readUInt32LE(16), pageSize: header.readUInt16LE(14) };
  };
  let last = read();
  let frames = 0;
  let transactions = 0;
  const poll = () => {
    const now = read();
    frames += now.frame >= last.frame ? now.frame - last.frame : now.frame;
    transactions += (now.change - last.change) >>> 0;
    last = now;
  };
  const timer = setInterval(poll, 2);
  return {
    take() {
      poll();
      const taken = { frames, transactions, pageSize: last.pageSize };
      frames = 0;
      transactions = 0;
      return taken;
    },
    close() {
      clearInterval(timer);
      closeSync(fd);
    },
  };
}

/** CPU ticks (1/100 s) of a process, all its threads; or of one thread (`/proc/PID/task/TID/stat`). */
const ticks = (pid, tid) => {
  const f = readFileSync(tid === undefined ? `/proc/${pid}/stat` : `/proc/${pid}/task/${tid}/stat`, 'utf8')
    .split(') ')[1]
    .split(' ');
  return Number(f[11]) + Number(f[12]);
};
/** Bytes a process has sent toward the disk so far (its pages dirtied in the page cache: the WAL and checkpoints). */
const writeBytes = (pid) => Number(/write_bytes: (\d+)/.exec(readFileSync(`/proc/${pid}/io`, 'utf8'))[1]);
const rssMb = (pid) => Math.round(Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) / 1024);
const round = (n, digits = 2) => Number(n.toFixed(digits));

/**
 * SOCKETS new anonymous users, each with its socket open, for each rate: a venue's guests order once or twice,
 * so a user's open orders stay few (one rate of 20 s at 1,000 commands/s gives each 20) instead of piling up
 * over the whole ladder, which would measure counting them (ordering.maxOpenPerAnonymousUser) more than orders.
 */
const users = (t) =>
  t.client.call({
    op: 'open',
    base: t.base,
    sockets: SOCKETS,
    tokenPath: t.tokenPath,
    tenant: demo.id,
    clientId: demo.clients[0].clientId,
    clientSecret: demo.clients[0].clientSecret,
  });

const targets = [await box(), ...(process.argv.includes('--peer') ? [await peer()] : [])];
for (const t of targets) {
  t.client = client();
  pin(t.proc.pid, 0);
  t.wal = walCounter(t.shm);
  t.sustained = true;
  console.error(`${t.name}: idle rss ${rssMb(t.proc.pid)} MB`);
}

const ourPids = () => [process.pid, ...targets.flatMap((t) => [t.proc.pid, t.client.proc.pid])];
for (const rate of RATES) {
  for (const t of targets.filter((x) => x.sustained)) {
    await t.client.call({ op: 'close' });
    const rssBefore = rssMb(t.proc.pid);
    const setupBefore = ticks(t.proc.pid);
    await users(t);
    // What a kiosk does after a reboot of the venue: a token, then its socket (CPU of the server per user).
    const userSetup = {
      cpuUsPerUser: Math.round(((ticks(t.proc.pid) - setupBefore) * 10_000) / SOCKETS),
      rssMbAdded: rssMb(t.proc.pid) - rssBefore,
    };
    pin(t.proc.pid, 0); // threads started since the last rate
    // The users' tokens were committed just now: their checkpoint (once the WAL is idle) is not the commands'.
    await new Promise((res) => setTimeout(res, 600));
    const loopBefore = await t.loop(); // resets the server's loop-delay monitor
    t.wal.take();
    const cpuBefore = ticks(t.proc.pid);
    const writtenBefore = writeBytes(t.proc.pid);
    const loopTicksBefore = ticks(t.proc.pid, t.proc.pid);
    const r = await withForeignCpu(ourPids, () => t.client.call({ op: 'run', rate, seconds: SECONDS, venue: VENUE }));
    const cpuTicks = ticks(t.proc.pid) - cpuBefore;
    const loopTicks = ticks(t.proc.pid, t.proc.pid) - loopTicksBefore;
    const loop = await t.loop();
    const wal = t.wal.take();
    // The checkpoint that copies the last commands back comes after them (once the WAL is idle, or later).
    await new Promise((res) => setTimeout(res, 2000));
    const written = writeBytes(t.proc.pid) - writtenBefore;
    const achieved = r.pushed / r.spanSeconds;
    t.sustained = r.errors === 0 && r.pushed === r.sent && achieved >= 0.95 * rate;
    console.log(
      JSON.stringify({
        server: t.name,
        rate,
        seconds: SECONDS,
        sockets: SOCKETS,
        sent: r.sent,
        pushed: r.pushed,
        errors: r.errors,
        ...(r.firstError ? { firstError: r.firstError } : {}),
        commandsPerSecond: round(achieved, 1),
        sustained: t.sustained,
        p50Ms: round(quantile(r.push, 0.5)),
        p99Ms: round(quantile(r.push, 0.99)),
        maxMs: round(r.push.at(-1) ?? NaN),
        confirmP99Ms: round(quantile(r.confirm, 0.99)),
        sendLagP99Ms: round(quantile(r.sendLag, 0.99)),
        cpuUsPerCommand: Math.round((cpuTicks * 10_000) / r.sent),
        loopThreadCpuUsPerCommand: Math.round((loopTicks * 10_000) / r.sent),
        loopDelayP99Ms: round(loop.p99Ms, 1),
        loopDelayMaxMs: round(loop.maxMs, 1),
        // The box's own fdatasync of the WAL, from its metrics (the peer's fsyncs are inside its COMMITs).
        walFsyncMeanMs:
          loop.fsyncs > loopBefore.fsyncs
            ? round((1000 * (loop.fsyncSeconds - loopBefore.fsyncSeconds)) / (loop.fsyncs - loopBefore.fsyncs))
            : undefined,
        walPagesPerCommand: round(wal.frames / r.sent, 1),
        walKbPerCommand: round((wal.frames * (wal.pageSize + 24)) / 1024 / r.sent, 1),
        transactionsPerCommand: round(wal.transactions / r.sent, 2),
        diskKbPerCommand: round(written / 1024 / r.sent, 1),
        rssMb: rssMb(t.proc.pid),
        foreignCpuPct: r.foreignCpuPct,
        tokenAndSocketCpuUs: userSetup.cpuUsPerUser,
        rssMbAddedBy1000Users: SOCKETS === 1000 ? userSetup.rssMbAdded : undefined,
      }),
    );
  }
  if (!targets.some((t) => t.sustained)) break;
}

for (const t of targets) {
  await t.client.call({ op: 'close' });
  t.client.proc.disconnect();
  t.wal.close();
  await stop(t.proc);
}
process.exit(0);
