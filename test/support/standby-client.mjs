// The venue's tablets and phones for test/standby-netns.test.ts, run inside the client's network namespace (plain
// JavaScript: node runs it there as it is). Customers place orders at a steady rate on the floating address and
// keep sockets open; a socket that closes reconnects with ?since= its last seq, as the screens do. It prints JSON
// lines on stdout and takes commands on stdin:
//   submit  -> one order with lines, submitted (a kitchen ticket): {"submitted": orderId, "claimCode": "..."}
//   stop    -> the load stops; each socket's frames are checked against a fresh replay: {"summary": {...}}
// Every loop is bounded by the `seconds` given and stops by itself.
import { createInterface } from 'node:readline';

const cfg = JSON.parse(process.argv[2]);
const { base, tenant, clientId, clientSecret, venue, customers, socketsPerCustomer, rate, seconds } = cfg;
const out = (o) => process.stdout.write(`${JSON.stringify(o)}\n`);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const deadline = Date.now() + seconds * 1000;
const basic = `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}`;
const PRODUCTS = ['zurek', 'rosol', 'barszcz', 'woda'];

async function call(path, token, body, timeoutMs = 3000) {
  return fetch(`${base}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(timeoutMs),
  });
}

async function token() {
  const res = await fetch(`${base}/auth-oauth2/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-tenant': tenant, authorization: basic },
    body: 'grant_type=password&username=anonymous&password=',
  });
  if (res.status !== 200) throw new Error(`token ${res.status} ${await res.text()}`);
  return (await res.json()).access_token;
}

/** A socket that reconnects with ?since= its last seq until stopped; every frame it got, in order. */
function socket(tok) {
  const s = { frames: [], last: 0, firstHello: undefined, reconnects: 0, open: false, stopped: false, ws: undefined };
  const connect = () => {
    if (s.stopped) return;
    const since = s.firstHello === undefined ? '' : `&since=${s.last}`;
    const ws = new WebSocket(`${base.replace('http', 'ws')}/ordering-api/ws?access_token=${tok}${since}`);
    s.ws = ws;
    ws.onopen = () => (s.open = true);
    ws.onmessage = (e) => {
      const f = JSON.parse(e.data);
      if (f.type === 'HELLO') {
        if (s.firstHello === undefined) s.firstHello = f.seq;
        s.last = Math.max(s.last, f.seq);
        return;
      }
      s.frames.push(f);
      s.last = Math.max(s.last, f.seq);
    };
    ws.onclose = () => {
      s.open = false;
      if (s.stopped || Date.now() > deadline) return;
      s.reconnects++;
      setTimeout(connect, 200);
    };
    ws.onerror = () => undefined;
  };
  connect();
  return s;
}

const tokens = [];
for (let i = 0; i < customers; i++) tokens.push(await token());
const sockets = tokens.flatMap((t, u) => Array.from({ length: socketsPerCustomer }, () => ({ u, s: socket(t) })));
while (sockets.some(({ s }) => s.firstHello === undefined) && Date.now() < deadline) await sleep(20);
out({ ready: sockets.length });

let stop = false;
let sent = 0;
const load = (async () => {
  const start = Date.now();
  while (!stop && Date.now() < deadline) {
    const due = start + (sent * 1000) / rate;
    if (due > Date.now()) await sleep(due - Date.now());
    const u = sent % customers;
    const n = sent++;
    const line = { productId: PRODUCTS[n % PRODUCTS.length], quantity: 1 };
    const t = Date.now();
    call('/ordering-api/api/order/new', tokens[u], { orderType: 'TAKE_AWAY', buckets: [{ venue, lines: [line] }] })
      .then(async (res) => {
        if (res.status === 200) out({ confirmed: (await res.json()).orderId, u, at: Date.now(), sentAt: t });
        else out({ refused: res.status, at: Date.now() });
      })
      .catch((err) => out({ failed: String(err.cause?.code ?? err.name), at: Date.now() }));
  }
})();

async function submit() {
  const tok = tokens[0];
  const res = await call('/ordering-api/api/order/new', tok, {
    orderType: 'TAKE_AWAY',
    buckets: [{ venue, lines: [{ productId: 'zurek', quantity: 2 }] }],
  });
  const { orderId } = await res.json();
  // Its socket frame names the claim code the kitchen ticket prints.
  let claimCode;
  for (let i = 0; i < 100 && !claimCode; i++) {
    claimCode = sockets.find(({ u }) => u === 0).s.frames.find((f) => f.payload?.id === orderId)?.payload.claimCode;
    if (!claimCode) await sleep(20);
  }
  const sub = await call(`/ordering-api/api/order/${orderId}/submit`, tok, {});
  out({ submitted: orderId, claimCode, status: sub.status, at: Date.now() });
}

/** One socket's frames against a replay of its stream from its first HELLO, on a fresh socket. */
function replayOf(u, since) {
  return new Promise((resolve) => {
    const frames = [];
    const ws = new WebSocket(`${base.replace('http', 'ws')}/ordering-api/ws?access_token=${tokens[u]}&since=${since}`);
    let quiet;
    const done = () => {
      ws.close();
      resolve(frames);
    };
    ws.onmessage = (e) => {
      const f = JSON.parse(e.data);
      if (f.type !== 'HELLO') frames.push(f.seq);
      clearTimeout(quiet);
      quiet = setTimeout(done, 500);
    };
    ws.onerror = () => done();
    setTimeout(done, 10_000);
  });
}

/** Every socket checked at once: what it got against what its stream holds. */
async function verify() {
  const results = await Promise.all(
    sockets.map(async ({ u, s }) => {
      const seqs = s.frames.map((f) => f.seq);
      const got = new Set(seqs);
      const replay = await replayOf(u, s.firstHello);
      return {
        missing: replay.filter((q) => !got.has(q)).length,
        duplicates: seqs.length - got.size,
        reconnects: s.reconnects,
        frames: seqs.length,
      };
    }),
  );
  const sum = (k) => results.reduce((n, r) => n + r[k], 0);
  return {
    sockets: sockets.length,
    missing: sum('missing'),
    duplicates: sum('duplicates'),
    reconnects: sum('reconnects'),
    frames: sum('frames'),
  };
}

createInterface({ input: process.stdin }).on('line', async (cmd) => {
  if (cmd === 'submit') await submit().catch((err) => out({ submitFailed: String(err) }));
  if (cmd === 'stop') {
    stop = true;
    await load;
    await sleep(1500);
    for (const { s } of sockets) s.stopped = true;
    const summary = await verify();
    for (const { s } of sockets) s.ws?.close();
    out({ summary, sent });
    process.exit(0);
  }
});
setTimeout(() => process.exit(2), seconds * 1000 + 30_000).unref();
