// A thousand boxes against one and against three centrals on one PostgreSQL (docs/performance.md "A thousand
// boxes"), printed, never asserted. BOXES simulated boxes in this one process (scripts/lib/fleet-box.mjs: the real
// protocol, one keep-alive agent, node:crypto signing) enrol, say hello every heartbeat, send their orders in
// batches and hold the catalogue's long poll (docs/sync.md "Down: the catalogue"), spread round-robin over the
// centrals' ports. Then: (1) steady state, (2) a price change reaching every long poll, (3) every central
// restarted while each box gathers a backlog of BACKLOG events. The centrals and PostgreSQL run niced on core 1,
// this client alone on core 0. Env: BOXES (1000), CENTRALS (1,3), STEADY_S (60), BACKLOG (100), CHANGES (3),
// ORDERS_PER_MIN (1 a box), RESTART_MAX_S (150), RESTART_SIGNAL (SIGTERM), HELLO_AFTER_BUSY (1; 0: a sender that
// keeps its hello after a 429), CENTRAL_NODE_ARGS (flags for the centrals' node, e.g. --cpu-prof).
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { demo, quantile, token } from './lib/box.mjs';
import { fleetAgent, fleetBoxClass, fleetStats } from './lib/fleet-box.mjs';
import * as server from './lib/fleet-central.mjs';
import { loadFleetLib } from './lib/fleet-lib.mjs';
import { benchRun, root } from './lib/run.mjs';

const env = (name, fallback) => Number(process.env[name] ?? fallback);
const BOXES = env('BOXES', 1000);
const CENTRALS = (process.env.CENTRALS ?? '1,3').split(',').map(Number);
const STEADY_S = env('STEADY_S', 60);
const BACKLOG = env('BACKLOG', 100);
const CHANGES = env('CHANGES', 3);
const ORDERS_PER_MIN = env('ORDERS_PER_MIN', 1);
const RESTART_MAX_S = env('RESTART_MAX_S', 150);
const RESTART_SIGNAL = process.env.RESTART_SIGNAL ?? 'SIGTERM';
/** Headquarters' API holds at most this many live enrolment codes a tenant (docs/sync.md "API"): rounds of it. */
const ROUND = 50;

// Every box holds a long poll and now and then a second socket: raise this process's open-file limit (and so its
// children's) when it is short, by running it again under prlimit.
const needFds = BOXES * 3 + 1024;
const softFds = Number(/Max open files\s+(\d+)/.exec(readFileSync('/proc/self/limits', 'utf8'))[1]);
if (softFds < needFds && !process.env.FLEET_FDS_RAISED) {
  console.log(`open files: ${softFds} < ${needFds}, running again under prlimit --nofile=${needFds}`);
  const r = spawnSync('prlimit', [`--nofile=${needFds}`, process.execPath, ...process.argv.slice(1)], {
    stdio: 'inherit',
    env: { ...process.env, FLEET_FDS_RAISED: '1' },
  });
  process.exit(r.status ?? 1);
}

const { started, tmp } = benchRun();
execFileSync('taskset', ['-apc', '0', String(process.pid)], { stdio: 'ignore' });
const lib = await loadFleetLib();
const sync = lib.resolveConfig({}).sync;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const ms = (v) => Math.round(v);
const spread = (values) => {
  const s = [...values].sort((a, b) => a - b);
  return { p50: ms(quantile(s, 0.5)), p99: ms(quantile(s, 0.99)), max: ms(s[s.length - 1] ?? NaN), n: s.length };
};
/** Waits until `done()` or `seconds` passed, looking every 250 ms; true when done. */
async function until(done, seconds) {
  const end = performance.now() + seconds * 1000;
  while (!done() && performance.now() < end) await sleep(250);
  return done();
}

async function runFleet(n) {
  console.log(`\n== ${BOXES} boxes, ${n} central${n > 1 ? 's' : ''} on one PostgreSQL`);
  const db = await server.startDatabase(started, join(tmp('vb-fleet-db-'), 'db'));
  const conns = await server.connectionSampler(db.url);
  const logged = {};
  const dirs = Array.from({ length: n }, () => tmp('vb-fleet-central-'));
  const ports = [];
  for (let i = 0; i < n; i++) ports.push(await server.freePort());
  const startOne = (i) => server.startCentralOn(started, { dataDir: dirs[i], port: ports[i], url: db.url, logged });
  // The first alone (migrations and the demo's catalogue), then the others.
  let centrals = [await startOne(0)];
  centrals.push(...(await Promise.all(dirs.slice(1).map((_, i) => startOne(i + 1)))));
  const meter = server.cpuMeter(() => centrals.map((c) => c.proc.pid), db.proc.pid);
  const hq = centrals[0].base;
  const { access_token: hqToken } = await token(hq, 'centrala', 'centrala-demo-1');
  const hqCall = (method, path, body) =>
    fetch(`${hq}${path}`, {
      method,
      headers: { authorization: `Bearer ${hqToken}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    }).then(async (r) => ({ status: r.status, body: await r.json() }));

  // Enrolment codes: the CLI (a process and a database connection each) against headquarters' API.
  const venues = demo.venues.map((v) => v.id);
  let t = performance.now();
  // Live codes count against headquarters' limit whoever made them: the CLI's go to the first boxes.
  const cliCodes = [];
  for (let i = 0; i < 3; i++) {
    const args = ['central', 'enrol', '--database-url', db.url, '--tenant', demo.id, '--venue', venues[i % 3]];
    const out = execFileSync(process.execPath, ['dist/main.cjs', ...args], { cwd: root, encoding: 'utf8' });
    cliCodes.push(out.trim().split('\n').pop());
  }
  const cliCodeMs = ms((performance.now() - t) / 3);

  const agent = fleetAgent(BOXES);
  const stats = fleetStats();
  const FleetBox = fleetBoxClass(lib, agent, sync, stats);
  const boxes = [];
  const runEnd = performance.now() + 20 * 60_000;
  let apiCodeMs = 0;
  t = performance.now();
  for (let i = 0; i < BOXES; i += ROUND) {
    const k = Math.min(ROUND, BOXES - i);
    const c0 = performance.now();
    const codes = cliCodes.splice(0, k);
    for (let j = codes.length; j < k; j++) {
      const a = await hqCall('POST', '/hq-api/api/enrol-codes', { venueId: venues[(i + j) % venues.length] });
      if (a.status !== 201) throw new Error(`enrol code: ${a.status} ${JSON.stringify(a.body)}`);
      codes.push(a.body.code);
    }
    apiCodeMs += performance.now() - c0;
    const round = codes.map((_, j) => new FleetBox(centrals[(i + j) % n].base));
    await Promise.all(
      round.map(async (b, j) => {
        const a = await b.enrol(codes[j], `fleet-${i + j}`);
        if (a.status !== 201) throw new Error(`enrol: ${a.status} ${JSON.stringify(a.body)}`);
      }),
    );
    for (const b of round) {
      // A fleet's boxes started at all times of day: each one's heartbeat falls anywhere in the period.
      void b.runSender(runEnd, Math.random() * sync.heartbeatSeconds * 1000);
      void b.runPoller(runEnd);
    }
    boxes.push(...round);
  }
  const enrolS = (performance.now() - t) / 1000;
  const apiCodes = BOXES - 3;
  console.log(
    `enrolled ${BOXES} in ${enrolS.toFixed(1)} s; a code takes ${cliCodeMs} ms from \`central enrol\`, ${(apiCodeMs / apiCodes).toFixed(1)} ms from headquarters' API`,
  );
  const ready = await until(() => boxes.every((b) => b.rev > 0 && b.acked === b.lastSeq), 60);
  console.log(`every box has its catalogue: ${ready}`);

  // A trickle of orders: each box about ORDERS_PER_MIN a minute, sent as the box sends them.
  // Each at its own moment within the second: boxes are not in step.
  const trickle = setInterval(() => {
    for (const b of boxes) {
      if (Math.random() < ORDERS_PER_MIN / 60) setTimeout(() => b.addOrders(1), Math.random() * 1000);
    }
  }, 1000);

  // ---- 1. steady state
  await sleep(5000);
  stats.reset(performance.now());
  conns.resetPeak();
  const m0 = meter();
  await sleep(STEADY_S * 1000);
  const steady = {
    cpu: server.cpuBetween(m0, meter()),
    rss: centrals.map((c) => server.rssOf(c.proc.pid)),
    databasePssMiB: server.databasePssMiB(db.proc.pid),
    pgConnections: { ...conns.state.now, peak: conns.state.peak },
    pgWaits: conns.state.waits,
    helloMs: spread(stats.helloMs),
    answers: stats.answers,
    why: stats.why,
    centralLogged: { ...logged },
  };
  console.log('1. steady state', JSON.stringify(steady));

  // ---- 2. catalogue changes reaching every long poll
  const changes = [];
  for (let c = 0; c < CHANGES; c++) {
    stats.reset(performance.now());
    const got = new Map();
    for (const b of boxes) b.onRev = (box, rev, at) => got.set(box, { rev, at });
    const m = meter();
    const t0 = performance.now();
    const a = await hqCall('PATCH', '/hq-api/api/menus/menu-krakow/products/pierogi-ruskie', { price: `${31 + c}.00` });
    const patchMs = performance.now() - t0;
    if (a.status !== 200) throw new Error(`price: ${a.status} ${JSON.stringify(a.body)}`);
    await until(() => got.size === BOXES, 30);
    const latency = [...got.values()].filter((g) => g.rev >= a.body.rev).map((g) => g.at - t0);
    changes.push({
      ...spread(latency),
      patchMs: ms(patchMs),
      cpu: server.cpuBetween(m, meter()),
      answers: stats.answers,
    });
    console.log(`2. change ${c + 1}`, JSON.stringify(changes[c]));
    await sleep(3000);
  }
  for (const b of boxes) b.onRev = () => undefined;

  // ---- 3. every central restarted; each box has a backlog when they come back
  clearInterval(trickle);
  await until(() => boxes.every((b) => b.acked === b.lastSeq), 20);
  stats.reset(performance.now());
  conns.resetPeak();
  for (const k of Object.keys(logged)) delete logged[k];
  const m3 = meter();
  const tKill = performance.now();
  const killed = (c) =>
    new Promise((r) => {
      if (c.proc.exitCode !== null) return r();
      c.proc.once('exit', r);
      c.proc.kill(RESTART_SIGNAL);
    });
  await Promise.all(centrals.map(killed));
  const tStart = performance.now();
  for (const b of boxes) {
    b.heldMark = tStart;
    b.addOrders(BACKLOG);
  }
  centrals = await Promise.all(dirs.map((_, i) => startOne(i)));
  const tUp = performance.now();
  console.log(
    `3. restart: ${n} central(s) stopped (${RESTART_SIGNAL}) in ${ms(tStart - tKill)} ms, up again ${ms(tUp - tStart)} ms later`,
  );
  const caughtAt = (b) => (b.acked >= b.lastSeq && b.firstHeldAt > 0 ? Math.max(b.ackedAt, b.firstHeldAt) : undefined);
  const all = await until(() => boxes.every((b) => caughtAt(b) !== undefined), RESTART_MAX_S + (tUp - tKill) / 1000);
  const caught = boxes.map(caughtAt).filter((x) => x !== undefined);
  const restart = {
    caughtUp: caught.length,
    allCaughtUp: all,
    fromUpS: spread(caught.map((x) => (x - tUp) / 1000)),
    backlogAckedS: spread(boxes.filter((b) => b.acked >= b.lastSeq).map((b) => (b.ackedAt - tUp) / 1000)),
    pollingAgainS: spread(boxes.filter((b) => b.firstHeldAt > 0).map((b) => (b.firstHeldAt - tUp) / 1000)),
    downS: +((tUp - tKill) / 1000).toFixed(1),
    cpu: server.cpuBetween(m3, meter()),
    peakRss: centrals.map((c) => server.rssOf(c.proc.pid).peakMiB),
    databasePssMiB: server.databasePssMiB(db.proc.pid),
    pgConnectionsPeak: conns.state.peak,
    pgWaits: conns.state.waits,
    answers: stats.answers,
    why: stats.why,
    centralLogged: logged,
  };
  console.log('3. restart', JSON.stringify(restart));
  const behind = boxes.filter((b) => caughtAt(b) === undefined).slice(0, 5);
  for (const b of behind) console.log('  not caught up:', JSON.stringify(b.state()));

  for (const b of boxes) b.stopped = true;
  agent.destroy();
  await Promise.all(centrals.map((c) => server.stop(c.proc)));
  await conns.close();
  await server.stop(db.proc);
  return {
    boxes: BOXES,
    centrals: n,
    enrolS: +enrolS.toFixed(1),
    cliCodeMs,
    apiCodeMs: +(apiCodeMs / apiCodes).toFixed(1),
    steady,
    changes,
    restart,
  };
}

const results = [];
for (const n of CENTRALS) results.push(await runFleet(n));
console.log(JSON.stringify(results));
process.exit(0);
