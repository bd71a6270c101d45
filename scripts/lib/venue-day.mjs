// A simulated busy day of one venue, driven through a box's public API (used by test/sync-day.test.ts and
// scripts/bench-sync.mjs): dine-in tabs with several rounds, take-away orders, some cancelled, and stock
// documents. Every command is awaited for its 200; commands on one order go in sequence (the box applies them
// in confirmation order), orders run `concurrency` at a time.

const TENANT = '4b0f8f4e-2d7e-4f7e-9a59-5c2f1e3d6a10';
const VENUE = '6f1c2f43-5a3e-4c55-9d51-1f7b2f0c9a01'; // open 00:00-24:00 on every channel
const PRODUCTS = ['zurek', 'pierogi-ruskie', 'kompot', 'schabowy', 'sernik'];

export async function staffToken(baseUrl) {
  const basic = Buffer.from('demo-kiosk:demo-kiosk-secret').toString('base64');
  const res = await fetch(`${baseUrl}/auth-oauth2/oauth/token`, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      'x-tenant': TENANT,
      authorization: `Basic ${basic}`,
    },
    body: 'grant_type=password&username=kelner&password=kelner-demo-1',
  });
  if (res.status !== 200) throw new Error(`token: ${res.status} ${await res.text()}`);
  return res.json();
}

async function post(baseUrl, token, path, body, headers = {}) {
  const res = await fetch(`${baseUrl}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}`, ...headers },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`POST ${path}: ${res.status} ${text}`);
  return JSON.parse(text);
}

async function claimCode(baseUrl, token, orderId) {
  for (let i = 0; i < 200; i++) {
    const res = await fetch(`${baseUrl}/ordering-api/api/order/${orderId}`, {
      headers: { authorization: `Bearer ${token}` },
    });
    if (res.status === 200) {
      const order = await res.json();
      if (order.status === 'READY') return order.claimCode;
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`order ${orderId} never became READY`);
}

/** One order's life; returns the number of commands it gave. */
async function orderLife(baseUrl, token, n) {
  const o = (name, body = {}) => post(baseUrl, token, `/ordering-api/api/order/${id}/${name}`, body);
  const p = (k) => PRODUCTS[(n + k) % PRODUCTS.length];
  const tab = n % 2 === 0;
  const first = await post(baseUrl, token, '/ordering-api/api/order/new', {
    orderType: tab ? 'DINE_IN_OPEN' : 'TAKE_AWAY',
    buckets: [
      {
        venue: VENUE,
        lines: [
          { productId: p(0), quantity: 1 },
          { productId: p(1), quantity: 2 },
        ],
      },
    ],
  });
  const id = first.orderId;
  let commands = 1;
  const appended = await o('append', { venue: VENUE, lines: [{ productId: p(2), quantity: 1 }] });
  await o('update', { venue: VENUE, lines: [{ id: appended.lines[0], quantity: 3 }] });
  const extra = await o('append', { venue: VENUE, lines: [{ productId: p(3), quantity: 1 }] });
  await o('remove', { venue: VENUE, lines: [extra.lines[0]] });
  await o('submit');
  commands += 5;
  if (n % 10 === 9) {
    await o('cancel', { reason: 'guest left' });
    return commands + 1;
  }
  await o('ready');
  commands += 1;
  const rounds = tab ? 3 : 0;
  for (let r = 0; r < rounds; r++) {
    await o('append', { venue: VENUE, lines: [{ productId: p(4 + r), quantity: 1 }] });
    await o('submit');
    await o('ready');
    commands += 3;
  }
  await o('complete', { claimCode: await claimCode(baseUrl, token, id) });
  return commands + 1;
}

/**
 * Stock documents of one item: a PZ delivery, then (for most) an issue of part of it: WZ, RW, an MM to the
 * second warehouse, or an Inventory count. Returns how many documents it posted.
 */
async function documents(baseUrl, tok, [warehouse, other], n) {
  const headers = { 'x-tenant': TENANT, 'x-user': tok.UUID };
  const doc = (kind, body) =>
    post(baseUrl, tok.access_token, `/warehouse-api/api/warehouse/${warehouse}/documents/${kind}`, body, headers);
  const id = `towar-${n % 40}`;
  await doc('pz', { items: [{ id, unit: 'kg', qty: 10.5 }], extra: { supplier: `Dostawca ${n % 7}` } });
  const follow = ['wz', 'rw', 'mm', 'inventory', null][n % 5];
  if (!follow) return 1;
  if (follow === 'mm') await doc('mm', { targetWarehouse: other, items: [{ id, unit: 'kg', qty: 2 }] });
  else if (follow === 'inventory') await doc('inventory', { items: [{ id, unit: 'kg', qty: 7.25 }] });
  else await doc(follow, { items: [{ id, unit: 'kg', qty: 1.125 }] });
  return 2;
}

async function pool(count, concurrency, fn) {
  let next = 0;
  let total = 0;
  const worker = async () => {
    while (next < count) {
      const n = await fn(next++);
      total += n;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return total;
}

/**
 * Drives `orders` orders and about `documents` stock documents (between `warehouses[0]` and `[1]`) into the box at baseUrl; returns the counts of
 * commands and documents given (each is one sync event).
 */
export async function driveVenueDay(baseUrl, { orders, documents: docCount, warehouses, concurrency = 16 }) {
  const tok = await staffToken(baseUrl);
  // Each task posts a PZ and four of five follow it with another document: 1.8 documents a task.
  const tasks = Math.ceil(docCount / 1.8);
  const [commands, docs] = await Promise.all([
    pool(orders, concurrency, (n) => orderLife(baseUrl, tok.access_token, n)),
    pool(tasks, 2, (n) => documents(baseUrl, tok, warehouses, n)),
  ]);
  return { commands, documents: docs };
}
