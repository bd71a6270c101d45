// Shared by the benchmarks: the demo tenant, a real box process on a free port, tokens, percentiles.
import { execFileSync, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import WebSocket from 'ws';

export const demo = JSON.parse(readFileSync(new URL('../../native-config/demo.json', import.meta.url), 'utf8'))
  .tenants[0];
const root = new URL('../..', import.meta.url).pathname;

/**
 * Starts dist/main.cjs with the demo on 127.0.0.1 and a free port; resolves once it logs that it listens.
 * BOX_NODE_ARGS passes flags to the box's node (e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof" to profile it, or
 * "--trace-gc" to see its collections on stderr). `core` starts it pinned to that core (taskset), so that it knows
 * from its start how many cores it has.
 */
export async function startBox(dataDir, extraArgs = [], { core } = {}) {
  const nodeArgs = (process.env.BOX_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const args = [
    ...nodeArgs,
    'dist/main.cjs',
    'serve',
    '--demo',
    '--port',
    '0',
    '--host',
    '127.0.0.1',
    '--data-dir',
    dataDir,
    ...extraArgs,
  ];
  // Measured as shipped: the systemd unit (native-config/venue-box.service) fixes glibc's mmap threshold, which
  // decides whether freed socket buffers go back to the system (docs/printing.md "Known gotchas").
  const env = { ...process.env, GLIBC_TUNABLES: process.env.GLIBC_TUNABLES ?? 'glibc.malloc.mmap_threshold=131072' };
  const [command, argv] =
    core === undefined ? [process.execPath, args] : ['taskset', ['-c', String(core), process.execPath, ...args]];
  const proc = spawn(command, argv, { cwd: root, env, stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise((resolve, reject) => {
    proc.once('exit', (code) => reject(new Error(`box exited with ${code}`)));
    createInterface({ input: proc.stdout }).on('line', (line) => {
      // Node's own tracing (BOX_NODE_ARGS="--trace-gc") writes plain lines to the same stdout: passed on to stderr.
      if (!line.startsWith('{')) {
        console.error(line);
        return;
      }
      const entry = JSON.parse(line);
      if (entry.msg === 'venue-box listening') resolve(entry.port);
      if (entry.level === 'error' || entry.level === 'fatal') console.error(line);
    });
  });
  return { proc, port, base: `http://127.0.0.1:${port}` };
}

/** The whole token response for a demo user (anonymous by default). */
export async function token(base, username = 'anonymous', password = '') {
  const { clientId, clientSecret } = demo.clients[0];
  const res = await fetch(`${base}/auth-oauth2/oauth/token`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      'x-tenant': demo.id,
      authorization: `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}`,
    },
    body: new URLSearchParams({ grant_type: 'password', username, password }),
  });
  if (res.status !== 200) throw new Error(`token: ${res.status} ${await res.text()}`);
  return res.json();
}

/** The q-quantile (0..1) of an ascending array. */
export const quantile = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;

/**
 * Open-loop `order/new` (one line) at `rate`/s for `seconds` with one token; resolves with each command's
 * latency in ms, from its due time to its confirmation, sorted ascending.
 */
export async function orderLoad(base, accessToken, rate, seconds) {
  const body = JSON.stringify({
    orderType: 'TAKE_AWAY',
    buckets: [{ venue: demo.venues[0].id, lines: [{ productId: 'zurek', quantity: 1 }] }],
  });
  const latencies = [];
  const inflight = [];
  const started = performance.now();
  for (let i = 0; i < rate * seconds; i++) {
    const due = started + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    inflight.push(
      fetch(`${base}/ordering-api/api/order/new`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${accessToken}` },
        body,
      }).then(async (res) => {
        await res.text();
        latencies.push(performance.now() - due);
      }),
    );
  }
  await Promise.all(inflight);
  return latencies.sort((a, b) => a - b);
}

/** A socket of the box, opened with a bearer token; resolves once open. */
export const openSocket = (url, accessToken) =>
  new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers: { authorization: `Bearer ${accessToken}` } });
    ws.once('open', () => resolve(ws));
    ws.once('error', reject);
  });

/** A new anonymous customer with its socket open; `onOrderChange(orderId, at)` hears each ORDER_CHANGE. */
export async function customerSocket(base, port, onOrderChange) {
  const { access_token: accessToken } = await token(base);
  const ws = await openSocket(`ws://127.0.0.1:${port}/ordering-api/ws`, accessToken);
  ws.on('message', (data) => {
    const at = performance.now();
    const frame = JSON.parse(String(data));
    if (frame.type === 'ORDER_CHANGE') onOrderChange(frame.payload.id, at);
  });
  return { token: accessToken, ws };
}

/**
 * The box's event loop gets core 0 to itself; its other threads (libuv's pool where scrypt runs, the signer
 * worker, V8's helpers) and the calling client go to core 1, as a Raspberry Pi's other cores would take them.
 * Call again before each measurement: threads start lazily.
 */
export function pinBox(pid) {
  execFileSync('taskset', ['-apc', '1', String(process.pid)], { stdio: 'ignore' });
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    execFileSync('taskset', ['-pc', Number(tid) === pid ? '0' : '1', tid], { stdio: 'ignore' });
  }
}

const cpuLine = () => readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);

/** Foreign CPU: the share of this machine's CPU used outside the processes measured, over `fn`. */
export async function withForeignCpu(pids, fn) {
  const ticks = (pid) => {
    try {
      const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
      return Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]);
    } catch {
      return 0;
    }
  };
  const before = cpuLine();
  const ours = pids().reduce((s, p) => s + ticks(p), 0);
  const result = await fn();
  const after = cpuLine();
  const busy = (l) => l.reduce((a, b) => a + b, 0) - l[3] - l[4];
  const total = after.reduce((a, b) => a + b, 0) - before.reduce((a, b) => a + b, 0);
  const used = busy(after) - busy(before) - (pids().reduce((s, p) => s + ticks(p), 0) - ours);
  return { ...result, foreignCpuPct: Math.max(0, Math.round((100 * used) / total)) };
}
