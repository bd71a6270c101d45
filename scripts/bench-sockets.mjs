// Slow sockets against a real box: memory and the push latency of everyone else. The box's event loop runs on
// core 0, this client and the box's other threads on core 1 (scripts/lib/box.mjs pinBox).
// For each N in PAUSED (default 100,1000): starts dist/main.cjs with the demo, opens N staff venue sockets and
// stops reading them (the TCP stream is paused, as a tablet that froze), opens CUSTOMERS reading customer
// sockets, then sends RATE order/new commands per second (LINES lines each) for SECONDS, round robin over the
// customers. Prints the box's RSS (start, peak, end), how many paused sockets the box closed as too slow, and
// the customers' command -> ORDER_CHANGE latency p50/p99. The socket limits are the defaults except maxPerUser
// and maxPerToken, raised so one staff login can open N sockets; SOCKETS_CONFIG='{"maxBufferedBytes": ...}'
// overrides others.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { customerSocket, demo, openSocket, pinBox, quantile, startBox, token, withForeignCpu } from './lib/box.mjs';

const PAUSED = (process.env.PAUSED ?? '100,1000').split(',').map(Number);
const CUSTOMERS = Number(process.env.CUSTOMERS ?? 50);
const RATE = Number(process.env.RATE ?? 40);
const SECONDS = Number(process.env.SECONDS ?? 20);
const LINES = Number(process.env.LINES ?? 50);
const VENUE = demo.venues[0].id;
const staffUser = demo.users.find((u) => u.username === 'kuchnia');

async function run(paused) {
  const dataDir = mkdtempSync(join(tmpdir(), 'vb-bench-sockets-'));
  const configFile = `${dataDir}.json`;
  const sockets = { maxPerUser: 100_000, maxPerToken: 100_000, ...JSON.parse(process.env.SOCKETS_CONFIG ?? '{}') };
  writeFileSync(configFile, JSON.stringify({ sockets }));
  const { proc: box, port, base } = await startBox(dataDir, ['--config', configFile]);
  pinBox(box.pid);
  let tooSlow = 0;
  createInterface({ input: box.stdout }).on('line', (line) => {
    if (line.includes('socket too slow')) tooSlow++;
  });
  const rssMb = () => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${box.pid}/status`, 'utf8'))[1]) / 1024;
  const wsUrl = `ws://127.0.0.1:${port}/ordering-api/ws`;

  const staff = (await token(base, staffUser.username, staffUser.password)).access_token;
  const slow = [];
  for (let i = 0; i < paused; i += 100) {
    slow.push(
      ...(await Promise.all(
        Array.from({ length: Math.min(100, paused - i) }, () => openSocket(`${wsUrl}?venue=${VENUE}`, staff)),
      )),
    );
  }
  // READING=1: the same sockets keep reading, the control row (what 1000 tablets that keep up cost).
  if (process.env.READING !== '1') for (const ws of slow) ws._socket.pause();

  const sentAt = new Map();
  const pushedAt = new Map();
  const latencies = [];
  const timeline = [];
  const settle = (id) => {
    if (!sentAt.has(id) || !pushedAt.has(id)) return;
    latencies.push(pushedAt.get(id) - sentAt.get(id));
    timeline.push([sentAt.get(id), pushedAt.get(id) - sentAt.get(id)]);
  };
  const customers = await Promise.all(
    Array.from({ length: CUSTOMERS }, () =>
      customerSocket(base, port, (id, at) => {
        pushedAt.set(id, at);
        settle(id);
      }),
    ),
  );

  const body = JSON.stringify({
    orderType: 'TAKE_AWAY',
    buckets: [{ venue: VENUE, lines: Array.from({ length: LINES }, () => ({ productId: 'zurek', quantity: 1 })) }],
  });
  // The box's own event-loop delay over the load (its /metrics: max since the last scrape): tells a stall of the
  // box from one of this client.
  const loopMaxMs = async () => {
    const text = await (await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${staff}` } })).text();
    return Math.round(1000 * Number(/^venue_box_event_loop_delay_max_seconds (\S+)$/m.exec(text)?.[1] ?? NaN));
  };
  await loopMaxMs();
  const startMb = rssMb();
  let peakMb = startMb;
  const sampler = setInterval(() => {
    peakMb = Math.max(peakMb, rssMb());
  }, 100);
  const total = RATE * SECONDS;
  const started = performance.now();
  // Foreign CPU: what other processes of the machine took meanwhile (the figure is only as good as it is low).
  const { foreignCpuPct } = await withForeignCpu(
    () => [box.pid, process.pid],
    async () => {
      const inflight = [];
      for (let i = 0; i < total; i++) {
        const due = started + (i * 1000) / RATE;
        const wait = due - performance.now();
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        const c = customers[i % customers.length];
        const sent = performance.now();
        inflight.push(
          fetch(`${base}/ordering-api/api/order/new`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', authorization: `Bearer ${c.token}` },
            body,
          }).then(async (res) => {
            const { orderId } = await res.json();
            sentAt.set(orderId, sent);
            settle(orderId);
          }),
        );
      }
      await Promise.all(inflight);
      const deadline = performance.now() + 5000;
      while (latencies.length < total && performance.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      return {};
    },
  );
  clearInterval(sampler);
  const boxLoopMaxMs = await loopMaxMs();
  const endMb = rssMb();
  // The worst push of each second of the run: shows whether a slow start or the whole run sets the p99.
  const worstBySecond = Array.from({ length: SECONDS }, (_, s) =>
    Math.round(Math.max(0, ...timeline.filter(([at]) => Math.floor((at - started) / 1000) === s).map(([, ms]) => ms))),
  );
  const sorted = [...latencies].sort((a, b) => a - b);
  const row = {
    paused,
    customers: CUSTOMERS,
    rate: RATE,
    seconds: SECONDS,
    lines: LINES,
    rssStartMb: Math.round(startMb),
    rssPeakMb: Math.round(peakMb),
    rssEndMb: Math.round(endMb),
    closedTooSlow: tooSlow,
    pushed: latencies.length,
    sent: total,
    p50Ms: +quantile(sorted, 0.5).toFixed(1),
    p99Ms: +quantile(sorted, 0.99).toFixed(1),
    worstBySecond,
    boxLoopMaxMs,
    foreignCpuPct,
  };
  for (const ws of [...slow, ...customers.map((c) => c.ws)]) ws.terminate();
  box.kill('SIGTERM');
  await new Promise((r) => box.on('exit', r));
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(configFile, { force: true });
  return row;
}

for (const n of PAUSED) {
  const row = await run(n);
  console.log(
    `${n} paused sockets, ${RATE} commands/s x ${SECONDS} s (${LINES} lines): box RSS ${row.rssStartMb} -> peak ${row.rssPeakMb} -> ${row.rssEndMb} MB, ` +
      `${row.closedTooSlow} closed too slow, customers' pushes ${row.pushed}/${row.sent}, p50 ${row.p50Ms} ms, p99 ${row.p99Ms} ms (foreign CPU ${row.foreignCpuPct}%)`,
  );
  console.log(JSON.stringify(row));
}
