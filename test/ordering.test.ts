import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { DEMO, startTestBox, type TestBox } from './support/box.js';
import { command, ISO, newOrder, UUID } from './support/orders.js';
import { openSocket, type TestSocket } from './support/socket.js';
import { contractsOf } from './support/contracts.js';

let box: TestBox;
let token: string;
let userId: string;
let ws: TestSocket;

beforeAll(async () => {
  box = await startTestBox();
  const t = await box.token();
  token = t.access_token;
  userId = t.UUID;
  ws = await openSocket(box.wsUrl('/ordering-api/ws'), token);
  await ws.next('HELLO');
});
afterAll(async () => {
  ws.close();
  await box.stop();
});

const VENUE = DEMO.openVenue;

describe('order/new', () => {
  test('an empty order is confirmed with no lines and pushed with every field of the interface', async () => {
    // A user of its own: the order is this user's first event whichever test ran before.
    const own = await box.token();
    const ownWs = await openSocket(box.wsUrl('/ordering-api/ws'), own.access_token);
    await ownWs.next('HELLO');
    const c = await command(box, own.access_token, 'new', newOrder(VENUE));
    expect(c).toEqual({ correlationId: expect.stringMatching(UUID), orderId: expect.stringMatching(UUID), lines: [] });
    const { payload, seq } = await ownWs.next('ORDER_CHANGE');
    ownWs.close();
    // The confirmation and the frame as /openapi.json and /asyncapi.json describe them (docs/api.md "Contracts").
    (await contractsOf(box)).response('POST', '/ordering-api/api/order/new', 200, c);
    (await contractsOf(box)).frame({ type: 'ORDER_CHANGE', seq, payload });
    expect(seq).toBe(1); // the user's first event: the HELLO takes no number (docs/api.md "The socket")
    expect(payload).toEqual({
      tenant: DEMO.tenant,
      id: c.orderId,
      created: expect.stringMatching(ISO),
      lastChanged: expect.stringMatching(ISO),
      source: 'venue-box',
      users: [{ userId: own.UUID, roles: ['CREATOR', 'CUSTOMER'] }],
      orderType: 'TAKE_AWAY',
      total: '0.00',
      editTotal: '0.00',
      status: 'NEW',
      claimCode: expect.stringMatching(/^\d{6}$/),
      buckets: [
        {
          venue: VENUE,
          name: DEMO.venues[0]!.name,
          menu: DEMO.menu,
          lines: [],
          extra: { minDeliveryMinutes: '15', minDeliveryTime: '00:15:00', minOrderValue: '0.00' },
        },
      ],
      closed: false,
      completed: false,
    });
  });

  test('lines are priced from the menu, not by the client, and editTotal sums them', async () => {
    const c = await command(
      box,
      token,
      'new',
      newOrder(VENUE, [
        { productId: 'zurek', price: 0.01, quantity: 2, status: 'NEW' },
        { productId: 'kompot', price: 999, quantity: 1, status: 'NEW' },
      ]),
    );
    expect(c.lines).toHaveLength(2);
    const { payload } = await ws.next('ORDER_CHANGE');
    const lines = (payload.buckets as { lines: Record<string, unknown>[] }[])[0]!.lines;
    expect(lines.map((l) => l.id)).toEqual(c.lines);
    expect(lines[0]).toEqual({
      id: c.lines[0],
      creator: userId,
      created: expect.stringMatching(ISO),
      updated: expect.stringMatching(ISO),
      source: 'venue-box',
      quantity: 2,
      price: '18.00',
      productId: 'zurek',
      product: {
        kind: 'product',
        id: 'zurek',
        literals: { name: 'Żurek' },
        img: '/media/zurek.jpg',
        quantity: '1',
        price: '18.00',
        extra: { category: 'soups' },
      },
      status: 'NEW',
      hash: expect.stringMatching(/^[0-9a-f]{16}$/),
    });
    expect(payload.editTotal).toBe('43.00');
  });

  test('X-SOURCE in extra names the order source', async () => {
    await command(box, token, 'new', { ...newOrder(VENUE), extra: { 'X-SOURCE': 'kiosk-3' } });
    expect((await ws.next('ORDER_CHANGE')).payload.source).toBe('kiosk-3');
  });

  test('an unknown product is a NOTIFICATION invalidProduct with the line id and product id; nothing is created', async () => {
    const c = await command(
      box,
      token,
      'new',
      newOrder(VENUE, [
        { productId: 'zurek', quantity: 1 },
        { productId: 'kawior', quantity: 1 },
      ]),
    );
    const notification = await ws.next('NOTIFICATION');
    (await contractsOf(box)).frame(notification);
    const { payload } = notification;
    expect(payload).toEqual({
      type: 'OrderEventError',
      users: [userId],
      orderId: c.orderId,
      event: { correlationId: c.correlationId, user: userId, orderId: c.orderId },
      message: expect.stringContaining(c.lines[1]!),
      codes: [{ code: 'invalidProduct', message: expect.any(String), args: [c.lines[1], 'kawior'] }],
    });
    expect((await box.get(`/ordering-api/api/order/${c.orderId}`, token)).status).toBe(404);
  });

  test('a product sold only on another channel is invalidProduct on this one', async () => {
    const c = await command(box, token, 'new', newOrder(VENUE, [{ productId: 'ges', quantity: 1 }]));
    expect((await ws.next('NOTIFICATION')).payload.codes).toEqual([
      expect.objectContaining({ code: 'invalidProduct', args: [c.lines[0], 'ges'] }),
    ]);
    await command(box, token, 'new', newOrder(VENUE, [{ productId: 'ges', quantity: 1 }], 'DINE_IN'));
    expect((await ws.next('ORDER_CHANGE')).payload.editTotal).toBe('58.00');
  });

  test('an unknown venue is invalidVenue; an inactive channel is venueClosed', async () => {
    const unknown = '00000000-0000-4000-8000-000000000000';
    await command(box, token, 'new', newOrder(unknown));
    expect((await ws.next('NOTIFICATION')).payload.codes).toEqual([
      expect.objectContaining({ code: 'invalidVenue', args: [unknown] }),
    ]);
    // Nowa Huta's DELIVERY channel is inactive in the demo.
    await command(box, token, 'new', newOrder(DEMO.venues[2]!.id, undefined, 'DELIVERY'));
    expect((await ws.next('NOTIFICATION')).payload.codes).toEqual([
      expect.objectContaining({ code: 'venueClosed', args: [DEMO.venues[2]!.id, 'DELIVERY'] }),
    ]);
  });
});

describe('order/{id}/append and GET order/{id}', () => {
  test('appending two lines yields two more line objects, editTotal and lastChanged updated', async () => {
    const created = await command(box, token, 'new', newOrder(VENUE, [{ productId: 'rosol', quantity: 1 }]));
    const first = (await ws.next('ORDER_CHANGE')).payload;
    await new Promise((r) => setTimeout(r, 5));
    const c = await command(box, token, `${created.orderId}/append`, {
      venue: VENUE,
      lines: [
        { productId: 'sernik', quantity: 2, price: 1, status: 'NEW' },
        { productId: 'woda', quantity: 1 },
      ],
    });
    expect(c.orderId).toBe(created.orderId);
    expect(c.lines).toHaveLength(2);
    const { payload } = await ws.next('ORDER_CHANGE');
    const lines = (payload.buckets as { lines: { id: string }[] }[])[0]!.lines;
    expect(lines.map((l) => l.id)).toEqual([...created.lines, ...c.lines]);
    expect(payload.editTotal).toBe('50.50');
    expect(payload.claimCode).toBe(first.claimCode);
    expect(Date.parse(payload.lastChanged as string)).toBeGreaterThan(Date.parse(first.lastChanged as string));
    const res = await box.get(`/ordering-api/api/order/${created.orderId}`, token);
    expect(res.status).toBe(200);
    expect(await (await contractsOf(box)).json('GET', '/ordering-api/api/order/{id}', res)).toEqual(payload);
  });

  test('append to an unknown order, or to a venue outside the order, is a NOTIFICATION', async () => {
    const missing = '11111111-1111-4111-8111-111111111111';
    const c = await command(box, token, `${missing}/append`, {
      venue: VENUE,
      lines: [{ productId: 'zurek', quantity: 1 }],
    });
    const n = await ws.next('NOTIFICATION');
    expect(n.payload.event).toEqual({ correlationId: c.correlationId, user: userId, orderId: missing });
    expect(n.payload.codes).toEqual([expect.objectContaining({ code: 'orderNotFound', args: [missing] })]);

    const created = await command(box, token, 'new', newOrder(VENUE));
    await ws.next('ORDER_CHANGE');
    await command(box, token, `${created.orderId}/append`, {
      venue: DEMO.venues[1]!.id,
      lines: [{ productId: 'zurek', quantity: 1 }],
    });
    expect((await ws.next('NOTIFICATION')).payload.codes).toEqual([
      expect.objectContaining({ code: 'invalidVenue', args: [DEMO.venues[1]!.id] }),
    ]);
  });

  test("another user's order does not exist for them: GET is 404, append is orderNotFound, the owner hears nothing", async () => {
    const created = await command(box, token, 'new', newOrder(VENUE));
    await ws.next('ORDER_CHANGE');
    const other = await box.token();
    const otherWs = await openSocket(box.wsUrl('/ordering-api/ws'), other.access_token);
    await otherWs.next('HELLO');
    const res = await box.get(`/ordering-api/api/order/${created.orderId}`, other.access_token);
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ codes: [{ code: 'notFound' }] });
    await command(box, other.access_token, `${created.orderId}/append`, {
      venue: VENUE,
      lines: [{ productId: 'zurek', quantity: 1 }],
    });
    expect((await otherWs.next('NOTIFICATION')).payload.codes).toEqual([
      expect.objectContaining({ code: 'orderNotFound' }),
    ]);
    const got = (await (await box.get(`/ordering-api/api/order/${created.orderId}`, token)).json()) as {
      buckets: { lines: unknown[] }[];
    };
    expect(got.buckets[0]!.lines).toEqual([]);
    otherWs.close();
  });

  test('extra is a map of strings with keys of 1..100 characters', async () => {
    for (const extra of [{ ['k'.repeat(101)]: 'v' }, { '': 'v' }, { k: 1 }]) {
      const res = await box.post('/ordering-api/api/order/new', token, { ...newOrder(VENUE), extra });
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({
        codes: [{ code: 'invalidField', args: [expect.stringMatching(/^\/extra/)] }],
      });
    }
  });

  test('a path id that is not a UUID is 404; a bad append body is 400 with the field', async () => {
    expect((await box.get('/ordering-api/api/order/not-a-uuid', token)).status).toBe(404);
    const res = await box.post('/ordering-api/api/order/11111111-1111-4111-8111-111111111111/append', token, {
      venue: VENUE,
      lines: [],
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ codes: [{ code: 'invalidField', args: ['/lines'] }] });
  });

  test('commands on one order are applied in the order they were confirmed, each exactly once', async () => {
    const created = await command(box, token, 'new', newOrder(VENUE));
    await ws.next('ORDER_CHANGE');
    // Confirmed one after another without waiting for the pushes: the lines must land in that order.
    const sequential: string[] = [];
    for (let i = 0; i < 10; i++) {
      const c = await command(box, token, `${created.orderId}/append`, {
        venue: VENUE,
        lines: [{ productId: 'woda', quantity: 1 }],
      });
      sequential.push(c.lines[0]!);
    }
    // Confirmed concurrently: every one applied once, whatever order the requests raced into.
    const concurrent = await Promise.all(
      Array.from({ length: 10 }, () =>
        command(box, token, `${created.orderId}/append`, {
          venue: VENUE,
          lines: [{ productId: 'kompot', quantity: 2 }],
        }),
      ),
    );
    const counts: number[] = [];
    for (let i = 0; i < 20; i++) {
      const { payload } = await ws.next('ORDER_CHANGE');
      counts.push((payload.buckets as { lines: unknown[] }[])[0]!.lines.length);
    }
    expect(counts).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    const order = (await (await box.get(`/ordering-api/api/order/${created.orderId}`, token)).json()) as {
      editTotal: string;
      buckets: { lines: { id: string }[] }[];
    };
    const ids = order.buckets[0]!.lines.map((l) => l.id);
    expect(ids.slice(0, 10)).toEqual(sequential);
    expect(new Set(ids.slice(10))).toEqual(new Set(concurrent.map((c) => c.lines[0])));
    expect(order.editTotal).toBe('200.00');
  });
});
