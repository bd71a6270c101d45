// `npm run bench:standby`: what a standby box costs the primary, and how long a takeover takes (docs/performance.md
// "A standby box"). The primary runs on core 0; the standby, this script (the load client and the link) on core 1.
//
// 1. Command -> push latency (from a command's due time to its ORDER_CHANGE on the customer's socket) p50/p99 at
//    RATES commands/s, SOCKETS customers with a socket each, SECONDS each, for the box alone and with a standby
//    in step. The standby follows through a TCP relay in this process that holds every chunk LINK_DELAY_MS each
//    way (this kernel has no netem; Node's timers make it about 1 ms, more than the 0.5 ms of a LAN). Replication
//    bytes per command from the primary's status.
// 2. Takeover: KILLS times, a fresh pair, the primary killed (kill -9), `venue-box standby promote` on the standby:
//    time from the kill to the standby's first 200 to an order (p50/max). keepalived's own detection (the check's
//    fall, or three adverts) comes on top: test/standby-netns.test.ts measures the whole path.
// Every loop is bounded; the script stops everything it started.
import { execFile, execFileSync, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, connect } from 'node:net';
import { join } from 'node:path';
import { customerSocket, demo, quantile, startBox, token, withForeignCpu } from './lib/box.mjs';
import { benchRun, root } from './lib/run.mjs';

const RATES = (process.env.RATES ?? '100,500').split(',').map(Number);
const SOCKETS = Number(process.env.SOCKETS ?? 200);
const SECONDS = Number(process.env.SECONDS ?? 15);
const KILLS = Number(process.env.KILLS ?? 20);
const LINK_DELAY_MS = Number(process.env.LINK_DELAY_MS ?? 0.5);
// STANDBY_DIR=/dev/shm: the standby's data on a disk of its own (here tmpfs), as two boxes have two cards.
const STANDBY_DIR = process.env.STANDBY_DIR;
const { started, tmp } = benchRun();
const two = Number(execFileSync('nproc', { encoding: 'utf8' })) >= 2;
if (two) execFileSync('taskset', ['-apc', '1', String(process.pid)], { stdio: 'ignore' });
const cli = (args) => execFileSync(process.execPath, ['dist/main.cjs', ...args], { cwd: root, encoding: 'utf8' });
const run = (args) => promisify(execFile)(process.execPath, ['dist/main.cjs', ...args], { cwd: root });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** A TCP relay to `port` that delays every chunk `ms` each way: the link between the two boxes. */
function delayedLink(port, ms) {
  return new Promise((resolve) => {
    const server = createServer((client) => {
      const upstream = connect(port, '127.0.0.1');
      // As the boxes' own sockets: no Nagle (a small ACK held back for the next would cost 40 ms).
      client.setNoDelay(true);
      upstream.setNoDelay(true);
      const pipe = (from, to) =>
        from
          .on('data', (chunk) => setTimeout(() => to.writable && to.write(chunk), ms))
          .on('close', () => to.destroy());
      pipe(client, upstream);
      pipe(upstream, client);
      client.on('error', () => upstream.destroy());
      upstream.on('error', () => client.destroy());
    });
    server.listen(0, '127.0.0.1', () => resolve({ port: server.address().port, close: () => server.close() }));
  });
}

const freePort = () =>
  new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });

function config(dir) {
  const file = join(dir, 'bench.json');
  writeFileSync(
    file,
    JSON.stringify({
      auth: { anonymous: { perAddressPerMinute: 100_000 } },
      ordering: {
        maxOpenPerAnonymousUser: 10_000,
        customerCommandRate: { burst: 1_000_000 },
        // Load, not abuse: no write budget (docs/orders.md "Order limits").
        addressWriteRate: { burstBytes: 1 << 30, bytesPerMinute: 1 << 30 },
        venueWriteRate: { burstBytes: 1 << 30, bytesPerMinute: 1 << 30 },
      },
      sockets: { maxPerUser: 100 },
    }),
  );
  return file;
}

const status = async (base) => (await fetch(`${base}/standby-api/status`)).json();

/** A primary (core 0), and with `withStandby` a standby (core 1) following it over the delayed link. */
async function pair(withStandby) {
  const dir = tmp('vb-bench-standby-');
  const configFile = config(dir);
  const primaryPort = await freePort();
  const primary = await startBox(
    join(dir, 'p'),
    ['--config', configFile, '--port', String(primaryPort)],
    two ? { core: 0 } : {},
  );
  started.push(primary.proc);
  if (!withStandby) return { primary, pids: [primary.proc.pid] };
  // LINK_DELAY_MS=-1: no relay at all, the standby on the primary's port directly.
  const link = LINK_DELAY_MS < 0 ? { port: primaryPort, close() {} } : await delayedLink(primaryPort, LINK_DELAY_MS);
  const standbyPort = await freePort();
  const standbyDir = STANDBY_DIR ? mkdtempSync(join(STANDBY_DIR, 'vb-bench-standby-')) : join(dir, 's');
  if (STANDBY_DIR) process.on('exit', () => rmSync(standbyDir, { recursive: true, force: true }));
  const code = /pairing code: (\S+)/.exec(cli(['standby', 'code', '--data-dir', join(dir, 'p')]))[1];
  // Not execFileSync: the join goes through the link, which this process relays.
  await run([
    'standby',
    'join',
    `http://127.0.0.1:${link.port}`,
    '--code',
    code,
    '--self',
    `http://127.0.0.1:${standbyPort}`,
    '--data-dir',
    standbyDir,
  ]);
  const args = ['--config', configFile, '--port', String(standbyPort)];
  const standbyArgs = ['dist/main.cjs', 'serve', '--host', '127.0.0.1', '--data-dir', standbyDir, ...args];
  const standby = spawn(
    two ? 'taskset' : process.execPath,
    two ? ['-c', '1', process.execPath, ...standbyArgs] : standbyArgs,
    {
      cwd: root,
      stdio: 'ignore',
    },
  );
  started.push(standby);
  for (let i = 0; i < 200 && (await status(primary.base).catch(() => ({}))).state !== 'synchronous'; i++)
    await sleep(50);
  return { primary, standby, link, standbyPort, standbyDir, pids: [primary.proc.pid, standby.pid] };
}

/** Command -> push at `rate` for SECONDS over SOCKETS customers: latencies in ms, sorted. */
async function load(base, port, rate) {
  const dueOf = new Map();
  const pushedAt = new Map();
  const customers = [];
  for (let i = 0; i < SOCKETS; i++) customers.push(await customerSocket(base, port, (id, at) => pushedAt.set(id, at)));
  const body = JSON.stringify({
    orderType: 'TAKE_AWAY',
    buckets: [{ venue: demo.venues[0].id, lines: [{ productId: 'zurek', quantity: 1 }] }],
  });
  const inflight = [];
  const start = performance.now();
  for (let i = 0; i < rate * SECONDS; i++) {
    const due = start + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 0) await sleep(wait);
    inflight.push(
      fetch(`${base}/ordering-api/api/order/new`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${customers[i % SOCKETS].token}` },
        body,
      }).then(async (res) => dueOf.set((await res.json()).orderId, due)),
    );
  }
  await Promise.all(inflight);
  await sleep(500);
  for (const c of customers) c.ws.close();
  const latencies = [...dueOf].filter(([id]) => pushedAt.has(id)).map(([id, due]) => pushedAt.get(id) - due);
  return { latencies: latencies.sort((a, b) => a - b), commands: dueOf.size };
}

for (const rate of RATES) {
  for (const withStandby of [false, true]) {
    const p = await pair(withStandby);
    const before = withStandby ? (await status(p.primary.base)).replicatedBytes : 0;
    const { latencies, commands, foreignCpuPct } = await withForeignCpu(
      () => [...p.pids, process.pid],
      () => load(p.primary.base, p.primary.port, rate),
    );
    const after = withStandby ? await status(p.primary.base) : undefined;
    console.log(
      JSON.stringify({
        rate,
        standby: withStandby,
        pushP50Ms: +quantile(latencies, 0.5).toFixed(2),
        pushP99Ms: +quantile(latencies, 0.99).toFixed(2),
        pushMaxMs: +latencies.at(-1).toFixed(2),
        commands,
        pushed: latencies.length,
        state: after?.state,
        stalls: after?.stalls,
        replicationBytesPerCommand: after ? Math.round((after.replicatedBytes - before) / commands) : undefined,
        linkDelayMs: withStandby ? LINK_DELAY_MS : undefined,
        foreignCpuPct,
      }),
    );
    for (const proc of [p.primary.proc, p.standby].filter(Boolean)) proc.kill('SIGKILL');
    p.link?.close();
  }
}

const takeovers = [];
for (let k = 0; k < KILLS; k++) {
  const p = await pair(true);
  const { access_token: tok } = await token(p.primary.base);
  const killedAt = performance.now();
  p.primary.proc.kill('SIGKILL');
  const promote = spawn(
    process.execPath,
    ['dist/main.cjs', 'standby', 'promote', '--port', String(p.standbyPort), '--data-dir', p.standbyDir],
    {
      cwd: root,
      stdio: 'ignore',
    },
  );
  let took;
  for (const until = performance.now() + 20_000; performance.now() < until && took === undefined; await sleep(20)) {
    const res = await fetch(`http://127.0.0.1:${p.standbyPort}/ordering-api/api/order/new`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${tok}` },
      body: JSON.stringify({ orderType: 'TAKE_AWAY', buckets: [{ venue: demo.venues[0].id }] }),
    }).catch(() => undefined);
    if (res?.status === 200) took = performance.now() - killedAt;
    await res?.body?.cancel();
  }
  takeovers.push(took ?? Number.POSITIVE_INFINITY);
  promote.kill();
  p.standby.kill('SIGKILL');
  p.link.close();
}
takeovers.sort((a, b) => a - b);
console.log(
  JSON.stringify({
    takeovers: KILLS,
    p50Ms: Math.round(quantile(takeovers, 0.5)),
    maxMs: Math.round(takeovers.at(-1)),
    note: 'kill -9 to the first 200 on the standby, promote run at once (primarySilentMs 2000 of it); no central',
  }),
);
process.exit(0);
