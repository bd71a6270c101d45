// Abuse figures (docs/printing.md "Known gotchas" and the limits of "The API"), printed, never asserted:
//  1. a password-guessing flood: wrong passwords checked (400) and refused at once (429) per second, and what the
//     flood costs other clients (order confirmation p99 with and without it; a real staff sign-in meanwhile);
//  2. a hostile client growing one order to its line bound, then changing one line of it as fast as the box
//     answers: database bytes written per minute;
//  3. paused sockets: scripts/bench-sockets.mjs (box RSS and other clients' push p99 with N paused sockets).
// The box's event loop runs on core 0 (taskset), this client and the box's other threads on core 1.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { demo, orderLoad, pinBox, quantile, startBox, token } from './lib/box.mjs';

const SECONDS = Number(process.env.SECONDS ?? 10);
// Long enough that the customer's burst is a small part: the figure is the steady growth.
const HOSTILE_SECONDS = Number(process.env.HOSTILE_SECONDS ?? 60);
const root = new URL('..', import.meta.url).pathname;
const VENUE = demo.venues[0].id;
const basic = `Basic ${Buffer.from(`${demo.clients[0].clientId}:${demo.clients[0].clientSecret}`).toString('base64')}`;

/** A token request from a chosen local address (127.0.0.x): the box's throttles key on the peer address. */
function tokenFrom(port, localAddress, form) {
  return new Promise((resolve) => {
    const body = new URLSearchParams(form).toString();
    const started = performance.now();
    const req = request(
      {
        host: '127.0.0.1',
        port,
        localAddress,
        method: 'POST',
        path: '/auth-oauth2/oauth/token',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          'x-tenant': demo.id,
          authorization: basic,
          'content-length': Buffer.byteLength(body),
        },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode, ms: performance.now() - started }));
      },
    );
    req.on('error', () => resolve({ status: 0, ms: performance.now() - started }));
    req.end(body);
  });
}

const dataDir = mkdtempSync(join(tmpdir(), 'vb-abuse-'));
const box = await startBox(dataDir);
const staff = await token(box.base, 'kelner', 'kelner-demo-1');
pinBox(box.proc.pid);

// ---- 1. password flood
console.log(`1. ${SECONDS} s of wrong passwords for kelner from 127.0.0.1, 16 at a time...`);
const quiet = await orderLoad(box.base, staff.access_token, 50, SECONDS);
const answers = new Map();
let flooding = true;
const flood = Promise.all(
  Array.from({ length: 16 }, async () => {
    while (flooding) {
      const r = await tokenFrom(box.port, '127.0.0.1', {
        grant_type: 'password',
        username: 'kelner',
        password: 'wrong-guess',
      });
      answers.set(r.status, (answers.get(r.status) ?? 0) + 1);
    }
  }),
);
const signIns = [];
const signer = (async () => {
  while (flooding) {
    signIns.push(
      await tokenFrom(box.port, '127.0.0.2', {
        grant_type: 'password',
        username: 'kuchnia',
        password: 'kuchnia-demo-1',
      }),
    );
    await new Promise((r) => setTimeout(r, 500));
  }
})();
const loud = await orderLoad(box.base, staff.access_token, 50, SECONDS);
flooding = false;
await Promise.all([flood, signer]);
const perSecond = (status) => ((answers.get(status) ?? 0) / SECONDS).toFixed(1);
const okSignIns = signIns.filter((s) => s.status === 200).length;
console.log(`   wrong passwords checked ${perSecond(400)}/s, refused at once (429) ${perSecond(429)}/s`);
console.log(
  `   order p99 ${quantile(quiet, 0.99).toFixed(1)} ms without the flood, ${quantile(loud, 0.99).toFixed(1)} ms with it`,
);
console.log(
  `   kuchnia from another address: ${okSignIns}/${signIns.length} sign-ins accepted, p99 ${quantile(
    signIns.map((s) => s.ms).sort((a, b) => a - b),
    0.99,
  ).toFixed(0)} ms`,
);

// ---- 2. hostile order growth
const fileBytes = () =>
  ['venue-box.db', 'venue-box.db-wal'].reduce(
    (n, f) => n + (existsSync(join(dataDir, f)) ? statSync(join(dataDir, f)).size : 0),
    0,
  );
const anon = await token(box.base);
const first = await (
  await fetch(`${box.base}/ordering-api/api/order/new`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${anon.access_token}` },
    body: JSON.stringify({ orderType: 'TAKE_AWAY', buckets: [{ venue: VENUE }] }),
  })
).json();
const lines = Array.from({ length: 200 }, () => ({ productId: 'zurek', quantity: 1 }));
const post = async (path, body) => {
  const res = await fetch(`${box.base}/ordering-api/api/order/${first.orderId}/${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${anon.access_token}` },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
};
// Every applied command stores the whole order again (socket events, sync outbox): the worst a customer can do is
// grow its order to the bound, then change one line of it as fast as the box lets it.
console.log(
  `2. an order grown to its line bound, then ${HOSTILE_SECONDS} s of changing one of its lines as fast as the box answers...`,
);
const before = fileBytes();
let lineId;
for (let i = 0; i < 10 && !lineId; i++) {
  const { status, body } = await post('append', { venue: VENUE, lines });
  if (status === 200 && body.lines?.length) lineId ??= body.lines[0];
}
for (let i = 0; i < 10; i++) await post('append', { venue: VENUE, lines }); // refused past maxLines
const answers2 = new Map();
const until = performance.now() + HOSTILE_SECONDS * 1000;
for (let q = 1; performance.now() < until; q = 3 - q) {
  const { status } = await post('update', { venue: VENUE, lines: [{ id: lineId, quantity: q }] });
  answers2.set(status, (answers2.get(status) ?? 0) + 1);
}
await new Promise((r) => setTimeout(r, 1500)); // the last commands applied and checkpointed
const order = await (
  await fetch(`${box.base}/ordering-api/api/order/${first.orderId}`, {
    headers: { authorization: `Bearer ${anon.access_token}` },
  })
).json();
const grownMb = (fileBytes() - before) / 1e6;
console.log(
  `   the order holds ${order.buckets?.[0]?.lines?.length ?? '?'} lines; changes answered ${JSON.stringify(Object.fromEntries(answers2))}; ` +
    `database grew ${grownMb.toFixed(1)} MB, ${((grownMb * 60) / HOSTILE_SECONDS).toFixed(1)} MB a minute`,
);

box.proc.kill('SIGTERM');
await new Promise((r) => box.proc.on('exit', r));
rmSync(dataDir, { recursive: true, force: true });

// ---- 3. paused sockets
if (existsSync(join(root, 'scripts/bench-sockets.mjs'))) {
  console.log('3. paused sockets (scripts/bench-sockets.mjs):');
  spawnSync(process.execPath, [join(root, 'scripts/bench-sockets.mjs')], { stdio: 'inherit' });
}
