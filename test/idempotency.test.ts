import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { DEMO, startTestBox, type TestBox, UNLIMITED_CUSTOMER } from './support/box.js';
import { expectApiError } from './support/fixtures.js';
import { type Confirmation, newOrder } from './support/orders.js';
import { openSocket, type TestSocket } from './support/socket.js';

/*
 * Idempotency-Key on order commands: a retry of a confirmed command gets the first confirmation byte for byte
 * and is applied once, even across kill -9; another command under the same key is 422.
 */

let box: TestBox;
let staff: string;

beforeAll(async () => {
  // One customer gives commands here faster than ordering.customerCommandRate allows: the box lifts that limit.
  box = await startTestBox({ config: UNLIMITED_CUSTOMER });
  staff = (await box.token(DEMO.staff.username, DEMO.staff.password)).access_token;
});
afterAll(async () => {
  await box?.stop();
});

const VENUE = DEMO.openVenue;
const NEW = '/ordering-api/api/order/new';
const ORDER = newOrder(VENUE, [{ productId: 'zurek', quantity: 2 }]);
// The same order, other whitespace and key order: the same command.
const ORDER_AGAIN = `{ "buckets" : [ { "lines": [ {"quantity": 2, "productId": "zurek"} ], "venue": "${VENUE}" } ],\n  "orderType": "TAKE_AWAY" }`;

let keys = 0;
const newKey = () => `key-${process.pid}-${++keys}-${Date.now()}`;

async function send(
  target: TestBox,
  path: string,
  token: string,
  body: unknown,
  key?: string,
): Promise<{ status: number; text: string }> {
  const res = await target.post(path, token, body, key === undefined ? {} : { 'idempotency-key': key });
  return { status: res.status, text: await res.text() };
}

async function customer(): Promise<{ token: string; userId: string; ws: TestSocket }> {
  const t = await box.token();
  const ws = await openSocket(box.wsUrl('/ordering-api/ws'), t.access_token);
  await ws.next('HELLO');
  return { token: t.access_token, userId: t.UUID, ws };
}

/**
 * Commands apply in confirmation order: once a later command's ORDER_CHANGE is pushed, every duplicate an
 * earlier request could have queued has been applied too. Returns the ids of every order pushed to the user.
 */
async function pushedOrders(c: { token: string; ws: TestSocket }): Promise<string[]> {
  const barrier = JSON.parse((await send(box, NEW, c.token, newOrder(VENUE))).text) as Confirmation;
  for (;;) {
    const frame = await c.ws.next('ORDER_CHANGE');
    if (frame.payload.id === barrier.orderId) break;
  }
  const ids = c.ws.frames.filter((f) => f.type === 'ORDER_CHANGE').map((f) => f.payload.id as string);
  return [...new Set(ids)].filter((id) => id !== barrier.orderId);
}

/** The orders of the staff list that list this user. */
async function ordersOf(userId: string): Promise<string[]> {
  const res = await box.get(`/ordering-api/api/orders?venue=${VENUE}&limit=200`, staff);
  const page = (await res.json()) as { items: { id: string; users: { userId: string }[] }[] };
  return page.items.filter((o) => o.users.some((u) => u.userId === userId)).map((o) => o.id);
}

describe('a retry with the same key', () => {
  test('new: the same confirmation, byte for byte, and one order', async () => {
    const c = await customer();
    const key = newKey();
    const first = await send(box, NEW, c.token, ORDER, key);
    expect(first.status).toBe(200);
    const again = await send(box, NEW, c.token, ORDER_AGAIN, key);
    expect(again).toEqual(first);
    const { orderId, lines } = JSON.parse(first.text) as Confirmation;
    expect(lines).toHaveLength(1);

    expect(await pushedOrders(c)).toEqual([orderId]);
    expect((await box.get(`/ordering-api/api/order/${orderId}`, c.token)).status).toBe(200);
    expect(await ordersOf(c.userId)).toHaveLength(2); // the order and the barrier of pushedOrders
    c.ws.close();
  });

  test('append and submit on an order: each applied once', async () => {
    const c = await customer();
    const { orderId } = JSON.parse((await send(box, NEW, c.token, newOrder(VENUE))).text) as Confirmation;
    const append = { venue: VENUE, lines: [{ productId: 'kompot', quantity: 1 }] };
    const appendKey = 'x'.repeat(255); // the longest key there is
    const a1 = await send(box, `/ordering-api/api/order/${orderId}/append`, c.token, append, appendKey);
    const a2 = await send(box, `/ordering-api/api/order/${orderId}/append`, c.token, append, appendKey);
    expect(a1.status).toBe(200);
    expect(a2).toEqual(a1);
    // submit takes an optional body: none and {} are the same command.
    const submitKey = newKey();
    const s1 = await send(box, `/ordering-api/api/order/${orderId}/submit`, c.token, '', submitKey);
    const s2 = await send(box, `/ordering-api/api/order/${orderId}/submit`, c.token, {}, submitKey);
    expect(s1.status).toBe(200);
    expect(s2).toEqual(s1);

    await pushedOrders(c);
    // A second submit would have been refused (emptyOrder) with a NOTIFICATION; there is none.
    expect(c.ws.frames.filter((f) => f.type === 'NOTIFICATION')).toEqual([]);
    const order = (await (await box.get(`/ordering-api/api/order/${orderId}`, c.token)).json()) as {
      status: string;
      buckets: { lines: { id: string }[] }[];
    };
    expect(order.status).toBe('ORDERED');
    expect(order.buckets[0]!.lines.map((l) => l.id)).toEqual((JSON.parse(a1.text) as Confirmation).lines);
    c.ws.close();
  });

  test('without a key, the same body twice is two commands', async () => {
    const c = await customer();
    expect((await send(box, NEW, c.token, ORDER)).status).toBe(200);
    expect((await send(box, NEW, c.token, ORDER)).status).toBe(200);
    expect(await pushedOrders(c)).toHaveLength(2);
    c.ws.close();
  });
});

describe('the same key for another command', () => {
  test('another body is 422 idempotencyKeyReused and changes nothing', async () => {
    const c = await customer();
    const key = newKey();
    const first = JSON.parse((await send(box, NEW, c.token, ORDER, key)).text) as Confirmation;
    const other = newOrder(VENUE, [{ productId: 'zurek', quantity: 3 }]);
    const res = await box.post(NEW, c.token, other, { 'idempotency-key': key });
    const body = await expectApiError(res, 422, 'idempotencyKeyReused');
    expect(body.codes[0]!.args).toEqual(['Idempotency-Key']);
    expect(await pushedOrders(c)).toEqual([first.orderId]);
    c.ws.close();
  });

  test('another path is 422 too', async () => {
    const c = await customer();
    const key = newKey();
    const { orderId } = JSON.parse((await send(box, NEW, c.token, ORDER, key)).text) as Confirmation;
    const res = await box.post(`/ordering-api/api/order/${orderId}/submit`, c.token, {}, { 'idempotency-key': key });
    await expectApiError(res, 422, 'idempotencyKeyReused');
    c.ws.close();
  });

  test('another user with the same key is independent', async () => {
    const [a, b] = [await customer(), await customer()];
    const key = newKey();
    const fromA = await send(box, NEW, a.token, ORDER, key);
    const fromB = await send(box, NEW, b.token, ORDER, key);
    expect([fromA.status, fromB.status]).toEqual([200, 200]);
    const [ca, cb] = [fromA, fromB].map((r) => JSON.parse(r.text) as Confirmation);
    expect(cb!.orderId).not.toBe(ca!.orderId);
    expect(await pushedOrders(a)).toEqual([ca!.orderId]);
    expect(await pushedOrders(b)).toEqual([cb!.orderId]);
    // And a different body from B under A's key is no conflict with A's command.
    expect((await send(box, NEW, b.token, newOrder(VENUE), newKey())).status).toBe(200);
    a.ws.close();
    b.ws.close();
  });
});

describe('a malformed key', () => {
  test.each([
    ['empty', ''],
    ['256 characters', 'k'.repeat(256)],
    ['a space inside', 'a b'],
    ['a tab inside', 'a\tb'],
    // Inside the value: uWS strips bytes >= 0x80 at either end of a header value as if they were whitespace.
    ['a character beyond ASCII', 'caf\u00e9s'],
  ])('%s: 400 invalidField Idempotency-Key, nothing queued', async (_name, key) => {
    const c = await customer();
    const res = await box.post(NEW, c.token, ORDER, { 'idempotency-key': key });
    const body = await expectApiError(res, 400, 'invalidField');
    expect(body.codes[0]!.args).toEqual(['Idempotency-Key']);
    expect(await pushedOrders(c)).toEqual([]);
    c.ws.close();
  });

  test('the key sent twice (two header lines) is refused, not read as one of them', async () => {
    const c = await customer();
    const key = newKey();
    const headers = new Headers({ 'content-type': 'application/json', authorization: `Bearer ${c.token}` });
    headers.append('idempotency-key', key);
    headers.append('idempotency-key', key);
    const res = await fetch(box.url(NEW), { method: 'POST', headers, body: JSON.stringify(ORDER) });
    await expectApiError(res, 400, 'invalidField');
    c.ws.close();
  });
});

/** One raw HTTP/1.1 request per connection, their bodies written in the same tick once every connection is open. */
async function sameTick(requests: string[]): Promise<{ status: number; body: string }[]> {
  const sockets = await Promise.all(
    requests.map(
      () =>
        new Promise<ReturnType<typeof connect>>((resolve, reject) => {
          const s = connect(box.port, '127.0.0.1', () => resolve(s));
          s.on('error', reject);
        }),
    ),
  );
  const replies = sockets.map(
    (s) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        let text = '';
        const timer = setTimeout(() => reject(new Error(`no reply: ${text}`)), 5000);
        s.setEncoding('utf8');
        s.on('data', (chunk: string) => {
          text += chunk;
          const end = text.indexOf('\r\n\r\n');
          const length = /\r\ncontent-length: (\d+)/i.exec(text.slice(0, end))?.[1];
          if (end < 0 || length === undefined || text.length < end + 4 + Number(length)) return;
          clearTimeout(timer);
          s.destroy();
          resolve({ status: Number(text.slice(9, 12)), body: text.slice(end + 4, end + 4 + Number(length)) });
        });
      }),
  );
  // Heads first, so the box has every request parsed and waiting for its body; then every body in one go.
  const split = requests.map((r) => r.indexOf('\r\n\r\n') + 4);
  for (const [i, s] of sockets.entries()) s.write(requests[i]!.slice(0, split[i]));
  await new Promise((r) => setTimeout(r, 50));
  for (const [i, s] of sockets.entries()) s.write(requests[i]!.slice(split[i]));
  return Promise.all(replies);
}

const rawPost = (token: string, key: string, body: string) =>
  `${[
    `POST ${NEW} HTTP/1.1`,
    'Host: x',
    `Authorization: Bearer ${token}`,
    'Content-Type: application/json',
    `Idempotency-Key: ${key}`,
    `Content-Length: ${Buffer.byteLength(body)}`,
  ].join('\r\n')}\r\n\r\n${body}`;

describe('concurrent requests with the same key', () => {
  // Whether two requests reach the box in the same turn of its loop (before the first commits) is up to the
  // scheduler, so each case runs several rounds; measured here, most rounds of two do.
  const ROUNDS = 6;

  test('duplicates arriving together are queued once and all get the one confirmation', async () => {
    const c = await customer();
    const orderIds: string[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const key = newKey();
      const replies = await sameTick([ORDER, ORDER].map((o) => rawPost(c.token, key, JSON.stringify(o))));
      expect(replies.map((r) => r.status)).toEqual([200, 200]);
      expect(replies[1]!.body).toBe(replies[0]!.body);
      orderIds.push((JSON.parse(replies[0]!.body) as Confirmation).orderId);
    }
    expect((await pushedOrders(c)).sort()).toEqual(orderIds.sort());
    c.ws.close();
  });

  test('a different body arriving together with the first is 422, the first is confirmed', async () => {
    const c = await customer();
    const other = JSON.stringify(newOrder(VENUE, [{ productId: 'kompot', quantity: 1 }]));
    for (let round = 0; round < ROUNDS; round++) {
      const key = newKey();
      const replies = await sameTick([rawPost(c.token, key, JSON.stringify(ORDER)), rawPost(c.token, key, other)]);
      expect(replies.map((r) => r.status).sort()).toEqual([200, 422]);
    }
    expect(await pushedOrders(c)).toHaveLength(ROUNDS);
    c.ws.close();
  });
});

describe('kill -9', () => {
  test('a retry after restart gets the stored confirmation, and every command is applied exactly once', async () => {
    const own = await startTestBox({ config: UNLIMITED_CUSTOMER });
    let again: TestBox | undefined;
    try {
      const t = await own.token();
      const created = JSON.parse((await send(own, NEW, t.access_token, newOrder(VENUE))).text) as Confirmation;
      const path = `/ordering-api/api/order/${created.orderId}/append`;
      const append = { venue: VENUE, lines: [{ productId: 'woda', quantity: 1 }] };

      // Appends under their own keys, 8 at a time, until the box is killed mid-flight.
      const sent: string[] = [];
      const confirmed = new Map<string, string>();
      let killed = false;
      const worker = async (w: number) => {
        for (let i = 0; !killed; i++) {
          const key = `append-${w}-${i}`;
          sent.push(key);
          try {
            const r = await send(own, path, t.access_token, append, key);
            if (r.status === 200) confirmed.set(key, r.text);
          } catch {
            // the connection died with the process: maybe committed, never confirmed
          }
        }
      };
      const workers = Array.from({ length: 8 }, (_, w) => worker(w));
      await new Promise((r) => setTimeout(r, 300));
      own.proc.kill('SIGKILL');
      await own.stop();
      killed = true;
      await Promise.all(workers);
      expect(confirmed.size).toBeGreaterThan(10);

      again = await startTestBox({ dataDir: own.dataDir, config: UNLIMITED_CUSTOMER });
      // Every key retried, confirmed or not: a confirmed one answers as before, the others are applied now.
      const lines: string[] = [];
      for (const key of sent) {
        const r = await send(again, path, t.access_token, append, key);
        expect(r.status).toBe(200);
        if (confirmed.has(key)) expect(r.text).toBe(confirmed.get(key));
        lines.push(...(JSON.parse(r.text) as Confirmation).lines);
      }
      // The order holds exactly one line per key: nothing lost, nothing applied twice.
      const order = await waitForLines(again, created.orderId, t.access_token, lines.length);
      expect(order.sort()).toEqual([...lines].sort());
    } finally {
      await again?.stop();
      await own.stop();
    }
  });

  test('a new order confirmed just before the kill: the retry answers with the original ids', async () => {
    const own = await startTestBox({ config: UNLIMITED_CUSTOMER });
    let again: TestBox | undefined;
    try {
      const t = await own.token();
      const key = newKey();
      const first = await send(own, NEW, t.access_token, ORDER, key);
      expect(first.status).toBe(200);
      own.proc.kill('SIGKILL');
      await own.stop();

      again = await startTestBox({ dataDir: own.dataDir, config: UNLIMITED_CUSTOMER });
      const retry = await send(again, NEW, t.access_token, ORDER_AGAIN, key);
      expect(retry).toEqual(first);
      const { orderId, lines } = JSON.parse(first.text) as Confirmation;
      expect(await waitForLines(again, orderId, t.access_token, 1)).toEqual(lines);
      const list = (await (
        await again.get(
          `/ordering-api/api/orders?venue=${VENUE}`,
          (
            await again.token(DEMO.staff.username, DEMO.staff.password)
          ).access_token,
        )
      ).json()) as { items: { id: string }[] };
      expect(list.items.map((o) => o.id)).toEqual([orderId]);
    } finally {
      await again?.stop();
      await own.stop();
    }
  });
});

/** The order's line ids once it has `count` of them (commands apply just after their confirmation). */
async function waitForLines(target: TestBox, orderId: string, token: string, count: number): Promise<string[]> {
  let ids: string[] = [];
  for (let i = 0; i < 100; i++) {
    const res = await target.get(`/ordering-api/api/order/${orderId}`, token);
    if (res.status === 200) {
      const order = (await res.json()) as { buckets: { lines: { id: string }[] }[] };
      ids = order.buckets.flatMap((b) => b.lines.map((l) => l.id));
      if (ids.length >= count) break;
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  // Give a duplicate, if there were one, the time to show up.
  await new Promise((r) => setTimeout(r, 100));
  const res = await target.get(`/ordering-api/api/order/${orderId}`, token);
  return ((await res.json()) as { buckets: { lines: { id: string }[] }[] }).buckets.flatMap((b) =>
    b.lines.map((l) => l.id),
  );
}
