// The load generator of `npm run bench` (scripts/bench-orders.mjs), a process of its own so that its CPU is not
// the server's: cheaper than the server it measures, it speaks HTTP/1.1 over raw keep-alive TCP connections
// (a request is one write, a response is parsed by its Content-Length) and reads the sockets with `ws`.
// Driven over IPC: {op: 'open', base, sockets} makes that many anonymous users, each with its socket open;
// {op: 'run', rate, seconds} sends `order/new` (one line) open loop, round robin over the users, and answers
// with the latencies from each command's write to the connection to its 200 and to its ORDER_CHANGE arriving on
// the user's socket, and each command's send lag: how long after its due time it was written (the client's
// timer, and the wait for a free connection once the server falls behind), so that no delay goes unseen.
import { connect } from 'node:net';
import { performance } from 'node:perf_hooks';
import WebSocket from 'ws';

const CONNECTIONS = 64;
/** How long after the last due time the pushes still missing are waited for. */
const GRACE_MS = 5000;

/** One keep-alive HTTP/1.1 connection; `request` resolves with {status, body} and queues behind the one in flight. */
function httpConnection(host, port) {
  const socket = connect({ host, port, noDelay: true });
  let buf = Buffer.alloc(0);
  const queue = []; // {bytes, resolve, reject, sentAt}: the head is in flight
  let closed;
  const send = (entry) => {
    entry.sentAt = performance.now();
    socket.write(entry.bytes);
  };
  socket.on('data', (chunk) => {
    buf = buf.length === 0 ? chunk : Buffer.concat([buf, chunk]);
    for (;;) {
      const head = buf.indexOf('\r\n\r\n');
      if (head < 0) return;
      const headers = buf.subarray(0, head).toString('latin1');
      const length = /\r\ncontent-length: *(\d+)/i.exec(headers);
      if (!length) throw new Error(`a response without Content-Length: ${headers}`);
      const end = head + 4 + Number(length[1]);
      if (buf.length < end) return;
      const body = buf.subarray(head + 4, end).toString('utf8');
      buf = buf.subarray(end);
      const done = queue.shift();
      done.resolve({ status: Number(headers.slice(9, 12)), body, sentAt: done.sentAt });
      if (queue.length > 0) send(queue[0]);
    }
  });
  const fail = (err) => {
    closed = err;
    for (const q of queue.splice(0)) q.reject(err);
  };
  socket.on('error', fail);
  socket.on('close', () => fail(closed ?? new Error('connection closed')));
  return {
    busy: () => queue.length,
    closed: () => closed !== undefined,
    request(bytes) {
      if (closed) return Promise.reject(closed);
      return new Promise((resolve, reject) => {
        queue.push({ bytes, resolve, reject, sentAt: 0 });
        if (queue.length === 1) send(queue[0]);
      });
    },
    close: () => socket.destroy(),
  };
}

function requestBytes(host, method, path, headers, body) {
  const lines = [`${method} ${path} HTTP/1.1`, `host: ${host}`, `content-length: ${Buffer.byteLength(body)}`];
  for (const [k, v] of Object.entries(headers)) lines.push(`${k}: ${v}`);
  return Buffer.from(`${lines.join('\r\n')}\r\n\r\n${body}`);
}

let pool = [];
let users = [];
let target;
const pushedAt = new Map(); // orderId -> when its ORDER_CHANGE arrived
let onPush = () => undefined;

let turn = 0;
/**
 * The least busy connection of the pool, taken in turn (a request never waits behind a slow one while another
 * is free); one the server closed (uWS closes a connection idle for 10 s) is replaced.
 */
function connection() {
  let best;
  for (let i = 0; i < pool.length; i++) {
    const at = (turn + i) % pool.length;
    if (pool[at].closed()) pool[at] = httpConnection(target.host, target.port);
    if (!best || pool[at].busy() < best.busy()) best = pool[at];
  }
  turn = (turn + 1) % pool.length;
  return best;
}

async function open({ base, sockets, tokenPath, tenant, clientId, clientSecret }) {
  const url = new URL(base);
  target = { host: url.hostname, port: Number(url.port), hostHeader: url.host };
  pool = Array.from({ length: CONNECTIONS }, () => httpConnection(target.host, target.port));
  const tokenRequest = requestBytes(
    target.hostHeader,
    'POST',
    tokenPath,
    {
      'content-type': 'application/x-www-form-urlencoded',
      'x-tenant': tenant,
      authorization: `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}`,
    },
    'grant_type=password&username=anonymous&password=',
  );
  for (let i = 0; i < sockets; i += 50) {
    users.push(
      ...(await Promise.all(
        Array.from({ length: Math.min(50, sockets - i) }, async () => {
          const res = await connection().request(tokenRequest);
          if (res.status !== 200) throw new Error(`token: ${res.status} ${res.body}`);
          const accessToken = JSON.parse(res.body).access_token;
          const ws = new WebSocket(`ws://${target.hostHeader}/ordering-api/ws`, {
            headers: { authorization: `Bearer ${accessToken}` },
          });
          await new Promise((resolve, reject) => {
            ws.once('open', resolve);
            ws.once('error', reject);
          });
          ws.on('message', (data) => {
            const at = performance.now();
            const frame = JSON.parse(String(data));
            if (frame.type !== 'ORDER_CHANGE') return;
            pushedAt.set(frame.payload.id, at);
            onPush(frame.payload.id);
          });
          return { accessToken, ws };
        }),
      )),
    );
  }
  return { users: users.length };
}

async function run({ rate, seconds, venue }) {
  pushedAt.clear();
  const body = JSON.stringify({
    orderType: 'TAKE_AWAY',
    buckets: [{ venue, lines: [{ productId: 'zurek', quantity: 1 }] }],
  });
  const requests = users.map((u) =>
    requestBytes(
      target.hostHeader,
      'POST',
      '/ordering-api/api/order/new',
      {
        'content-type': 'application/json',
        authorization: `Bearer ${u.accessToken}`,
      },
      body,
    ),
  );
  const total = Math.round(rate * seconds);
  const sentAtOf = new Map(); // orderId -> when its command was written, until its push has arrived
  const pushLatencies = [];
  const confirmLatencies = [];
  const sendLags = [];
  let errors = 0;
  let firstError;
  let lastPush = 0;
  const settle = (orderId) => {
    const sent = sentAtOf.get(orderId);
    const at = pushedAt.get(orderId);
    if (sent === undefined || at === undefined) return;
    pushLatencies.push(at - sent);
    lastPush = Math.max(lastPush, at);
    sentAtOf.delete(orderId);
    pushedAt.delete(orderId);
  };
  onPush = settle;
  const started = performance.now() + 5;
  let issued = 0;
  const inflight = [];
  while (issued < total) {
    const now = performance.now();
    while (issued < total && started + (issued * 1000) / rate <= now) {
      const due = started + (issued * 1000) / rate;
      inflight.push(
        connection()
          .request(requests[issued % requests.length])
          .then(
            ({ status, body: text, sentAt }) => {
              confirmLatencies.push(performance.now() - sentAt);
              sendLags.push(sentAt - due);
              if (status !== 200) {
                errors++;
                firstError ??= `${status} ${text}`;
                return;
              }
              const { orderId } = JSON.parse(text);
              sentAtOf.set(orderId, sentAt);
              settle(orderId);
            },
            (err) => {
              errors++;
              firstError ??= String(err);
            },
          ),
      );
      issued++;
    }
    await new Promise((r) => setTimeout(r, 1));
  }
  const lastDue = started + ((total - 1) * 1000) / rate;
  await Promise.all(inflight);
  while (pushLatencies.length + errors < total && performance.now() < lastDue + GRACE_MS)
    await new Promise((r) => setTimeout(r, 10));
  onPush = () => undefined;
  const sort = (a) => a.sort((x, y) => x - y);
  return {
    sent: total,
    confirmed: confirmLatencies.length - errors,
    pushed: pushLatencies.length,
    errors,
    firstError,
    spanSeconds: ((lastPush || lastDue) - started) / 1000,
    push: sort(pushLatencies),
    confirm: sort(confirmLatencies),
    sendLag: sort(sendLags),
  };
}

function close() {
  for (const u of users) u.ws.close();
  for (const c of pool) c.close();
  users = [];
  pool = [];
}

process.on('message', async (msg) => {
  try {
    const ops = { open, run, close };
    process.send({ ok: true, result: await ops[msg.op](msg) });
  } catch (err) {
    process.send({ ok: false, error: String(err?.stack ?? err) });
  }
});
