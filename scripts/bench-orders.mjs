// Order command throughput and push latency of a real box.
// Starts dist/main.cjs on a temp data dir, opens SOCKETS sockets of anonymous users, then sends `order/new`
// commands (one line each) at increasing open-loop rates. Per rate it prints commands/s achieved and the
// command -> ORDER_CHANGE latency p50/p99 (from sending the POST to the push arriving on the user's socket).
// The last line is one JSON object for the highest rate whose p99 stayed under 50 ms.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { customerSocket, demo, quantile, startBox } from './lib/box.mjs';

const SOCKETS = Number(process.env.SOCKETS ?? 1000);
const RATES = (process.env.RATES ?? '100,200,400,800,1200,1600').split(',').map(Number);
const SECONDS = Number(process.env.SECONDS ?? 4);
const VENUE = demo.venues[0].id;

const dataDir = mkdtempSync(join(tmpdir(), 'vb-bench-'));
// A thousand anonymous users from one address: far past the per-address budget a venue's real clients meet.
const configFile = join(dataDir, '..', `${dataDir.split('/').pop()}.json`);
writeFileSync(configFile, JSON.stringify({ auth: { anonymous: { perAddressPerMinute: 100_000 } } }));
const { proc: box, port, base } = await startBox(dataDir, ['--config', configFile]);

const pushedAt = new Map(); // orderId -> time the ORDER_CHANGE arrived
const waiting = new Map(); // orderId -> time the command was sent
const latencies = [];
function settle(orderId) {
  const sent = waiting.get(orderId);
  const pushed = pushedAt.get(orderId);
  if (sent === undefined || pushed === undefined) return;
  latencies.push(pushed - sent);
  waiting.delete(orderId);
  pushedAt.delete(orderId);
}

console.log(`opening ${SOCKETS} sockets of anonymous users...`);
const users = [];
for (let i = 0; i < SOCKETS; i += 50) {
  const batch = await Promise.all(Array.from({ length: Math.min(50, SOCKETS - i) }, () => customerSocket(base, port, (id, at) => {
    pushedAt.set(id, at);
    settle(id);
  })));
  users.push(...batch);
}

const body = JSON.stringify({ orderType: 'TAKE_AWAY', buckets: [{ venue: VENUE, lines: [{ productId: 'zurek', quantity: 1 }] }] });
async function send(user) {
  const sent = performance.now();
  const res = await fetch(`${base}/ordering-api/api/order/new`, {
    method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${user.token}` }, body,
  });
  const { orderId } = await res.json();
  waiting.set(orderId, sent);
  settle(orderId);
}

const rssMb = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${box.pid}/status`, 'utf8'))[1]) / 1024;

let best;
for (const rate of RATES) {
  latencies.length = 0;
  waiting.clear();
  pushedAt.clear();
  const total = rate * SECONDS;
  const tickMs = 10;
  const perTick = rate / (1000 / tickMs);
  const started = performance.now();
  let issued = 0;
  const inflight = [];
  await new Promise((resolve) => {
    const timer = setInterval(() => {
      const due = Math.min(total, Math.floor(((performance.now() - started) / tickMs + 1) * perTick));
      while (issued < due) inflight.push(send(users[issued++ % users.length]));
      if (issued >= total) {
        clearInterval(timer);
        resolve();
      }
    }, tickMs);
  });
  await Promise.all(inflight);
  const deadline = performance.now() + 5000;
  while (latencies.length < total && performance.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  const elapsed = (performance.now() - started) / 1000;
  const sorted = [...latencies].sort((a, b) => a - b);
  const row = {
    rate, commandsPerSecond: Math.round(latencies.length / elapsed), p50Ms: +quantile(sorted, 0.5).toFixed(2),
    p99Ms: +quantile(sorted, 0.99).toFixed(2), pushed: latencies.length, sent: total, sockets: users.length,
    rssMb: Math.round(rssMb()),
  };
  console.log(`rate ${rate}/s: ${row.commandsPerSecond} commands/s, p50 ${row.p50Ms} ms, p99 ${row.p99Ms} ms, ${row.pushed}/${total} pushed, rss ${row.rssMb} MB`);
  if (row.p99Ms < 50 && row.pushed === total) best = row;
}

for (const u of users) u.ws.terminate();
box.kill('SIGTERM');
await new Promise((r) => box.on('exit', r));
rmSync(dataDir, { recursive: true, force: true });
rmSync(configFile, { force: true });
const { commandsPerSecond = 0, p50Ms = null, p99Ms = null, sockets = users.length, rssMb: rss = null } = best ?? {};
console.log(JSON.stringify({ commandsPerSecond, p50Ms, p99Ms, sockets, rssMb: rss }));
