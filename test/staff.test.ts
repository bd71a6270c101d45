import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { DEMO, startTestBox, type TestBox } from './support/box.js';
import { linesOf, nextChange, nextCodes, orderCommand, type OrderPayload } from './support/lifecycle.js';
import { command, newOrder } from './support/orders.js';
import { openSocket, type TestSocket } from './support/socket.js';
import { contractsOf } from './support/contracts.js';

let box: TestBox;
let customer: string;
let staff: string;
let cws: TestSocket;

beforeAll(async () => {
  box = await startTestBox();
  customer = (await box.token()).access_token;
  staff = (await box.token('kuchnia', 'kuchnia-demo-1')).access_token;
  cws = await openSocket(box.wsUrl('/ordering-api/ws'), customer);
  await cws.next('HELLO');
});
afterAll(async () => {
  cws.close();
  await box.stop();
});

const VENUE = DEMO.openVenue;
const OTHER = DEMO.venues[1]!.id;
const refusal = (url: string, token?: string) =>
  openSocket(url, token).then(
    (ws) => {
      ws.close();
      throw new Error('upgrade was accepted');
    },
    (err: { status?: number }) => err.status,
  );

describe('staff socket /ordering-api/ws?venue=V', () => {
  test("sees every order of the venue as it changes, including a customer's, and replays after ?since=N", async () => {
    const venueWs = await openSocket(box.wsUrl(`/ordering-api/ws?venue=${VENUE}`), staff);
    const hello = await venueWs.next('HELLO');
    (await contractsOf(box)).frame(hello);
    expect(hello.payload).toMatchObject({ venue: VENUE, userId: expect.any(String) });

    const c = await command(box, customer, 'new', newOrder(VENUE, [{ productId: 'zurek', quantity: 1 }]));
    const seen = await nextChange(venueWs, c.orderId);
    expect(seen).toEqual(await nextChange(cws, c.orderId));
    expect(seen.status).toBe('NEW');
    venueWs.close();
    await venueWs.closed;

    // While the display is offline: a submit and a rejected command (NOTIFICATIONs stay with their user).
    await orderCommand(box, customer, c.orderId, 'submit');
    const submitted = await nextChange(cws, c.orderId);
    const bad = await orderCommand(box, customer, c.orderId, 'ready');
    await nextCodes(cws, bad);
    const again = await openSocket(box.wsUrl(`/ordering-api/ws?venue=${VENUE}&since=${hello.seq}`), staff);
    await again.next('HELLO');
    expect(await nextChange(again, c.orderId)).toEqual(seen);
    expect(await nextChange(again, c.orderId)).toEqual(submitted);
    expect(again.frames.map((f) => f.type)).toEqual(['HELLO', 'ORDER_CHANGE', 'ORDER_CHANGE']);

    // The waiter's ready reaches the customer and the display.
    await orderCommand(box, staff, c.orderId, 'ready');
    expect((await nextChange(again, c.orderId)).status).toBe('READY');
    expect((await nextChange(cws, c.orderId)).status).toBe('READY');
    again.close();
  });

  test("hears only its own venue's orders", async () => {
    const other = await openSocket(box.wsUrl(`/ordering-api/ws?venue=${DEMO.venues[2]!.id}`), staff);
    await other.next('HELLO');
    const mine = await openSocket(box.wsUrl(`/ordering-api/ws?venue=${VENUE}`), staff);
    await mine.next('HELLO');
    const c = await command(box, customer, 'new', newOrder(VENUE));
    await nextChange(mine, c.orderId);
    await nextChange(cws, c.orderId);
    await new Promise((r) => setTimeout(r, 100));
    expect(other.frames.map((f) => f.type)).toEqual(['HELLO']);
    other.close();
    mine.close();
  });

  test('a customer token asking for a venue is 403, an unknown venue 404, before the upgrade', async () => {
    expect(await refusal(box.wsUrl(`/ordering-api/ws?venue=${VENUE}`), customer)).toBe(403);
    expect(await refusal(box.wsUrl('/ordering-api/ws?venue=55555555-5555-4555-8555-555555555555'), staff)).toBe(404);
    expect(await refusal(box.wsUrl('/ordering-api/ws?venue=not-a-venue'), staff)).toBe(404);
    expect(await refusal(box.wsUrl(`/ordering-api/ws?venue=${VENUE}`))).toBe(401);
  });
});

describe('GET /ordering-api/api/orders', () => {
  interface Page {
    items: OrderPayload[];
    next: string | null;
  }
  const list = async (query: string, token = staff): Promise<Page> => {
    const res = await box.get(`/ordering-api/api/orders${query}`, token);
    const text = await res.text();
    expect(res.status, text).toBe(200);
    return (await contractsOf(box)).response('GET', '/ordering-api/api/orders', 200, JSON.parse(text)) as Page;
  };

  test('staff page through every order of a venue newest first, filtered by status and since', async () => {
    const since = new Date().toISOString();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const c = await command(box, customer, 'new', newOrder(VENUE, [{ productId: 'woda', quantity: 1 }]));
      ids.push(c.orderId);
      await nextChange(cws, c.orderId);
      await new Promise((r) => setTimeout(r, 2));
    }
    // An order at another venue (made by staff, so the customer's socket stays quiet; that venue keeps real
    // opening hours, so it may be refused at this hour: either way it is not in venue 1's list).
    const elsewhere = await command(box, staff, 'new', newOrder(OTHER, undefined, 'DINE_IN'));
    await orderCommand(box, customer, ids[1]!, 'submit');
    await nextChange(cws, ids[1]!);

    const first = await list(`?venue=${VENUE}&since=${encodeURIComponent(since)}&limit=2`);
    expect(first.items.map((o) => o.id)).toEqual([ids[4], ids[3]]);
    expect(first.next).toEqual(expect.any(String));
    const second = await list(`?venue=${VENUE}&since=${encodeURIComponent(since)}&limit=2&cursor=${first.next}`);
    expect(second.items.map((o) => o.id)).toEqual([ids[2], ids[1]]);
    const third = await list(`?venue=${VENUE}&since=${encodeURIComponent(since)}&limit=2&cursor=${second.next}`);
    expect(third).toEqual({ items: [expect.objectContaining({ id: ids[0] })], next: null });
    expect(first.items.map((o) => o.id)).not.toContain(elsewhere.orderId);

    const ordered = await list(`?venue=${VENUE}&status=ORDERED,READY&since=${encodeURIComponent(since)}`);
    expect(ordered.items.map((o) => [o.id, o.status])).toEqual([[ids[1], 'ORDERED']]);
    expect(linesOf(ordered.items[0]!)[0]!.status).toBe('ORDERED');

    // Without filters: the whole tenant, the newest order first, full orders as the socket pushes them.
    const all = await list('');
    // Every order of this test, the other venue's too when its hours let it be made (whatever other tests made).
    const madeElsewhere = (await box.get(`/ordering-api/api/order/${elsewhere.orderId}`, staff)).status === 200;
    expect(all.items.map((o) => o.id)).toEqual(
      expect.arrayContaining(madeElsewhere ? [...ids, elsewhere.orderId] : ids),
    );
    const got = (await (await box.get(`/ordering-api/api/order/${ids[1]}`, staff)).json()) as OrderPayload;
    expect(all.items.find((o) => o.id === ids[1])).toEqual(got);
  });

  test('customers get 403; bad parameters 400 naming the parameter; an unknown venue 404', async () => {
    const res = await box.get('/ordering-api/api/orders', customer);
    expect(res.status).toBe(403);
    expect(await res.json()).toMatchObject({ codes: [{ code: 'forbidden' }] });
    for (const [query, field] of [
      ['?venue=x', 'venue'],
      ['?status=DONE', 'status'],
      ['?status=NEW,', 'status'],
      ['?since=yesterday', 'since'],
      ['?limit=0', 'limit'],
      ['?limit=201', 'limit'],
      ['?limit=2.5', 'limit'],
      ['?cursor=abc', 'cursor'],
    ] as const) {
      const r = await box.get(`/ordering-api/api/orders${query}`, staff);
      expect(r.status, query).toBe(400);
      expect(await r.json()).toMatchObject({ codes: [{ code: 'invalidField', args: [field] }] });
    }
    expect((await box.get('/ordering-api/api/orders?venue=55555555-5555-4555-8555-555555555555', staff)).status).toBe(
      404,
    );
  });
});

describe('sold-out products', () => {
  const lock = (body: unknown, token = staff, menu = DEMO.menu) =>
    fetch(box.url(`/menu-api/api/menu/${menu}/locks`), {
      method: 'PUT',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify(body),
    });
  const menuLocks = async (venue: string) =>
    (
      (await (
        await box.get(`/menu-api/api/menu/${DEMO.menu}?channel=TAKE_AWAY&instance=${venue}`, customer)
      ).json()) as {
        locks: unknown[];
      }
    ).locks;

  test('a locked product is listed in the venue menu and refused with productUnavailable until cleared', async () => {
    // A basket made before the kitchen ran out.
    const basket = await command(
      box,
      customer,
      'new',
      newOrder(VENUE, [
        { productId: 'barszcz', quantity: 1 },
        { productId: 'woda', quantity: 1 },
      ]),
    );
    await nextChange(cws, basket.orderId);

    const res = await lock({ venue: VENUE, productId: 'barszcz', locked: true, reason: 'no beetroot' });
    expect(res.status).toBe(200);
    const state = (await res.json()) as { since: string };
    expect(state).toEqual({
      productId: 'barszcz',
      venue: VENUE,
      locked: true,
      reason: 'no beetroot',
      since: expect.stringMatching(/Z$/),
    });
    expect(await menuLocks(VENUE)).toEqual([
      { productId: 'barszcz', venue: VENUE, reason: 'no beetroot', since: state.since },
    ]);
    expect(await menuLocks(OTHER)).toEqual([]);
    // Locking again keeps the first `since`.
    expect(await (await lock({ venue: VENUE, productId: 'barszcz', locked: true })).json()).toMatchObject({
      since: state.since,
      reason: '',
    });

    const refused = await command(
      box,
      customer,
      'new',
      newOrder(VENUE, [
        { productId: 'woda', quantity: 1 },
        { productId: 'barszcz', quantity: 2 },
      ]),
    );
    expect(await nextCodes(cws, refused)).toEqual([
      { code: 'productUnavailable', message: expect.any(String), args: [refused.lines[1], 'barszcz'] },
    ]);
    const append = await orderCommand(box, customer, basket.orderId, 'append', {
      venue: VENUE,
      lines: [{ productId: 'barszcz', quantity: 1 }],
    });
    expect(await nextCodes(cws, append)).toEqual([
      expect.objectContaining({ code: 'productUnavailable', args: [append.lines[0], 'barszcz'] }),
    ]);
    const update = await orderCommand(box, customer, basket.orderId, 'update', {
      venue: VENUE,
      lines: [{ id: basket.lines[0], quantity: 2 }],
    });
    expect(await nextCodes(cws, update)).toEqual([
      expect.objectContaining({ code: 'productUnavailable', args: [basket.lines[0], 'barszcz'] }),
    ]);
    const submit = await orderCommand(box, customer, basket.orderId, 'submit');
    expect(await nextCodes(cws, submit)).toEqual([
      expect.objectContaining({ code: 'productUnavailable', args: [basket.lines[0], 'barszcz'] }),
    ]);

    const cleared = await lock({ venue: VENUE, productId: 'barszcz', locked: false });
    expect(await cleared.json()).toEqual({
      productId: 'barszcz',
      venue: VENUE,
      locked: false,
      reason: null,
      since: null,
    });
    expect(await menuLocks(VENUE)).toEqual([]);
    await orderCommand(box, customer, basket.orderId, 'submit');
    expect(await nextChange(cws, basket.orderId)).toMatchObject({ status: 'ORDERED', total: '22.00' });
  });

  test('only staff lock; bad bodies 400; unknown product or a menu the venue does not use 404', async () => {
    expect((await lock({ venue: VENUE, productId: 'zurek', locked: true }, customer)).status).toBe(403);
    for (const [body, field] of [
      [{ venue: VENUE, productId: 'zurek' }, '/locked'],
      [{ venue: 'x', productId: 'zurek', locked: true }, '/venue'],
      [{ venue: VENUE, productId: '', locked: true }, '/productId'],
      [{ venue: VENUE, productId: 'zurek', locked: 'yes' }, '/locked'],
      [{ venue: VENUE, productId: 'zurek', locked: true, reason: 7 }, '/reason'],
    ] as const) {
      const r = await lock(body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(await r.json()).toMatchObject({
        codes: expect.arrayContaining([expect.objectContaining({ code: 'invalidField', args: [field] })]),
      });
    }
    expect((await lock({ venue: VENUE, productId: 'kawior', locked: true })).status).toBe(404);
    expect((await lock({ venue: VENUE, productId: 'zurek', locked: true }, staff, 'menu-other')).status).toBe(404);
    expect(await menuLocks(VENUE)).toEqual([]);
  });
});
