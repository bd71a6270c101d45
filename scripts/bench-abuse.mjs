// Abuse figures (docs/printing.md "Known gotchas" and the limits of "The API"), printed, never asserted:
//  1. a password-guessing flood: wrong passwords checked (400) and refused at once (429) per second, and what the
//     flood costs other clients (order confirmation p99 with and without it; a real staff sign-in meanwhile);
//  2. a hostile client growing one order to its line bound, then changing one line of it as fast as the box
//     answers: database bytes written per minute;
//  3. one address, many anonymous customers: 60 anonymous tokens of one address (the per-address token burst),
//     each growing an order to 400 lines and changing it as fast as the box answers: database growth a minute,
//     the 429s by option, and an honest customer's push p99 from another address, idle and meanwhile
//     (docs/performance.md "Many anonymous customers from one address");
//  4. paused sockets: scripts/bench-sockets.mjs (box RSS and other clients' push p99 with N paused sockets).
// PARTS=3 (or 1,3...) runs only those parts.
// The box's event loop runs on core 0 (taskset), this client and the box's other threads on core 1.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import Database from 'better-sqlite3';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { demo, openSocket, orderLoad, pinBox, quantile, startBox, token } from './lib/box.mjs';

const SECONDS = Number(process.env.SECONDS ?? 10);
// Long enough that the customer's burst is a small part: the figure is the steady growth.
const HOSTILE_SECONDS = Number(process.env.HOSTILE_SECONDS ?? 60);
const PARTS = new Set((process.env.PARTS ?? '1,2,3,4').split(',').map(Number));
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

if (PARTS.has(1) || PARTS.has(2)) await passwordsAndGrowth();
if (PARTS.has(3)) await manyAnonymous();

async function passwordsAndGrowth() {
  const dataDir = mkdtempSync(join(tmpdir(), 'vb-abuse-'));
  const box = await startBox(dataDir);
  const staff = await token(box.base, 'kelner', 'kelner-demo-1');
  pinBox(box.proc.pid);

  // ---- 1. password flood
  if (PARTS.has(1)) {
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
  }

  // ---- 2. hostile order growth
  if (PARTS.has(2)) {
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
  }
}

// ---- 4. paused sockets
if (PARTS.has(4) && existsSync(join(root, 'scripts/bench-sockets.mjs'))) {
  console.log('4. paused sockets (scripts/bench-sockets.mjs):');
  spawnSync(process.execPath, [join(root, 'scripts/bench-sockets.mjs')], { stdio: 'inherit' });
}

// ---- 3. one address, many anonymous customers
async function manyAnonymous() {
  const ABUSE_SECONDS = Number(process.env.ABUSE_SECONDS ?? 60);
  const dir = mkdtempSync(join(tmpdir(), 'vb-abuse-many-'));
  const many = await startBox(dir);
  pinBox(many.proc.pid);
  // Bytes in use: the database's pages less its free ones, the WAL's read as a reader sees them.
  const used = () => {
    const db = new Database(join(dir, 'venue-box.db'), { readonly: true });
    try {
      const p = (name) => db.pragma(name, { simple: true });
      return (p('page_count') - p('freelist_count')) * p('page_size');
    } finally {
      db.close();
    }
  };
  // The honest customer, from 127.0.0.3: a 3-line order, one line changed every 100 ms, each timed to its push.
  const honest = await token(many.base);
  const ws = await openSocket(`ws://127.0.0.1:${many.port}/ordering-api/ws`, honest.access_token);
  let pushed;
  ws.on('message', (data) => {
    if (JSON.parse(String(data)).type === 'ORDER_CHANGE') pushed?.();
  });
  const send = (path, body) =>
    new Promise((resolve) => {
      const text = JSON.stringify(body);
      const req = request(
        {
          host: '127.0.0.1',
          port: many.port,
          localAddress: '127.0.0.3',
          method: 'POST',
          path: `/ordering-api/api/order/${path}`,
          headers: {
            'content-type': 'application/json',
            authorization: `Bearer ${honest.access_token}`,
            'content-length': Buffer.byteLength(text),
          },
        },
        (res) => {
          let out = '';
          res.on('data', (c) => (out += c));
          res.on('end', () => resolve({ status: res.statusCode, body: JSON.parse(out) }));
        },
      );
      req.on('error', () => resolve({ status: 0, body: {} }));
      req.end(text);
    });
  const timedPush = async (path, body) => {
    const started = performance.now();
    const arrived = new Promise((r) => (pushed = r));
    const res = await send(path, body);
    if (res.status !== 200) return { res, ms: Number.NaN };
    await arrived;
    return { res, ms: performance.now() - started };
  };
  const lines = [1, 2, 3].map(() => ({ productId: 'zurek', quantity: 1 }));
  const { res: made } = await timedPush('new', { orderType: 'TAKE_AWAY', buckets: [{ venue: VENUE, lines }] });
  let q = 1;
  const pushes = async (untilMs) => {
    const times = [];
    while (performance.now() < untilMs) {
      q = 3 - q;
      const { ms } = await timedPush(`${made.body.orderId}/update`, {
        venue: VENUE,
        lines: [{ id: made.body.lines[0], quantity: q }],
      });
      if (!Number.isNaN(ms)) times.push(ms);
      await new Promise((r) => setTimeout(r, 100));
    }
    return times.sort((a, b) => a - b);
  };
  console.log(`3. one address, 60 anonymous customers: ${SECONDS} s idle, then ${ABUSE_SECONDS} s of abuse...`);
  const idle = await pushes(performance.now() + SECONDS * 1000);
  const before = used();
  const abuser = spawn(
    process.execPath,
    [join(root, 'scripts/lib/anonymous-abuse.mjs'), String(many.port), '127.0.0.2', '60', String(ABUSE_SECONDS * 1000)],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let out = '';
  abuser.stdout.on('data', (c) => (out += c));
  const exited = new Promise((r) => abuser.on('exit', r));
  const loud = await pushes(performance.now() + ABUSE_SECONDS * 1000);
  await exited;
  await new Promise((r) => setTimeout(r, 1500)); // the last commands applied
  const grownMb = (used() - before) / 1e6;
  const { tokens, answers } = JSON.parse(out);
  console.log(`   ${tokens} tokens; commands answered ${JSON.stringify(answers)}`);
  console.log(
    `   database grew ${grownMb.toFixed(1)} MB, ${((grownMb * 60) / ABUSE_SECONDS).toFixed(1)} MB a minute (pages in use)`,
  );
  console.log(
    `   honest push p99 ${quantile(idle, 0.99).toFixed(1)} ms idle (${idle.length}), ` +
      `${quantile(loud, 0.99).toFixed(1)} ms meanwhile (${loud.length}); p50 ${quantile(idle, 0.5).toFixed(1)} / ${quantile(loud, 0.5).toFixed(1)} ms`,
  );
  ws.close();
  many.proc.kill('SIGTERM');
  await new Promise((r) => many.proc.on('exit', r));
  rmSync(dir, { recursive: true, force: true });
}
