import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { DEMO, startTestBox, type TestBox, UNLIMITED_CUSTOMER } from './support/box.js';
import {
  bucketsOpen,
  linesOf,
  nextChange,
  nextCodes,
  orderCommand,
  type OrderPayload,
  printJobs,
} from './support/lifecycle.js';
import { command, newOrder, UUID } from './support/orders.js';
import { openSocket, type TestSocket } from './support/socket.js';

let box: TestBox;
let customer: string;
let customerId: string;
let staff: string;
let cws: TestSocket;
let sws: TestSocket;

beforeAll(async () => {
  // One customer gives commands here faster than ordering.customerCommandRate allows: the box lifts that limit.
  box = await startTestBox({ config: UNLIMITED_CUSTOMER });
  const c = await box.token();
  customer = c.access_token;
  customerId = c.UUID;
  const s = await box.token('kelner', 'kelner-demo-1');
  expect(s.scope).toBe('read write');
  staff = s.access_token;
  cws = await openSocket(box.wsUrl('/ordering-api/ws'), customer);
  sws = await openSocket(box.wsUrl('/ordering-api/ws'), staff);
  await cws.next('HELLO');
  await sws.next('HELLO');
});
afterAll(async () => {
  cws.close();
  sws.close();
  await box.stop();
});

const VENUE = DEMO.openVenue;

/** A new order of the customer, pushed; returns its confirmation and first ORDER_CHANGE. */
async function created(lines: { productId: string; quantity: number }[] = [], type = 'TAKE_AWAY') {
  const c = await command(box, customer, 'new', newOrder(VENUE, lines.length ? lines : undefined, type));
  return { c, order: await nextChange(cws, c.orderId) };
}

/** Submits as the customer and returns the pushed order. */
async function submitted(orderId: string): Promise<OrderPayload> {
  const c = await orderCommand(box, customer, orderId, 'submit');
  expect(c).toEqual({ correlationId: expect.stringMatching(UUID), orderId, lines: [] });
  return nextChange(cws, orderId);
}

describe('basket to pick-up', () => {
  test('submit orders the NEW lines, ready is heard by the customer, complete needs the claim code', async () => {
    const { c, order } = await created([
      { productId: 'zurek', quantity: 2 },
      { productId: 'kompot', quantity: 1 },
    ]);
    expect(order).toMatchObject({ status: 'NEW', total: '0.00', editTotal: '43.00' });

    // submit with no body at all (the route also takes `{}`)
    const res = await box.post(`/ordering-api/api/order/${c.orderId}/submit`, customer, '');
    expect(res.status).toBe(200);
    const ordered = await nextChange(cws, c.orderId);
    expect(ordered).toMatchObject({ status: 'ORDERED', total: '43.00', editTotal: '0.00', closed: false });
    expect(linesOf(ordered).map((l) => l.status)).toEqual(['ORDERED', 'ORDERED']);

    await orderCommand(box, staff, c.orderId, 'ready');
    const ready = await nextChange(cws, c.orderId);
    expect(ready.status).toBe('READY');
    // The staff member is not a user of the order, yet hears the answer to their own command.
    expect((await nextChange(sws, c.orderId)).status).toBe('READY');
    expect(ready.users).toEqual([{ userId: customerId, roles: ['CREATOR', 'CUSTOMER'] }]);

    const wrong = ready.claimCode === '000000' ? '000001' : '000000';
    const bad = await orderCommand(box, staff, c.orderId, 'complete', { claimCode: wrong });
    expect(await nextCodes(sws, bad)).toEqual([
      { code: 'invalidClaimCode', message: expect.any(String), args: [c.orderId] },
    ]);
    expect(
      ((await (await box.get(`/ordering-api/api/order/${c.orderId}`, customer)).json()) as OrderPayload).status,
    ).toBe('READY');

    await orderCommand(box, staff, c.orderId, 'complete', { claimCode: ready.claimCode });
    const done = await nextChange(cws, c.orderId);
    expect(done).toMatchObject({
      status: 'COMPLETED',
      closed: true,
      completed: true,
      total: '43.00',
      editTotal: '0.00',
    });
    await nextChange(sws, c.orderId);
    expect(bucketsOpen(box, c.orderId)).toEqual([0]);

    // This box has no printers configured: the jobs are kept, unrouted (test/printing*.test.ts print them).
    const jobs = printJobs(box, c.orderId);
    expect(jobs.map((j) => [j.kind, j.round, j.state, j.venue_id])).toEqual([
      ['kitchen', 1, 'unrouted', VENUE],
      ['claim', 1, 'unrouted', VENUE],
    ]);
    expect(jobs[0]!.payload).toMatchObject({
      kind: 'kitchen',
      venueName: DEMO.venues[0]!.name,
      orderType: 'TAKE_AWAY',
      claimCode: ready.claimCode,
      round: 1,
      timeZone: 'Europe/Warsaw',
      localTime: expect.stringMatching(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}$/),
      total: '43.00',
      lines: [
        { text: '2 x Żurek', quantity: 2, name: 'Żurek', category: 'soups', price: '18.00', amount: '36.00' },
        { text: '1 x Kompot', quantity: 1, name: 'Kompot', category: 'drinks', price: '7.00', amount: '7.00' },
      ],
    });

    // A closed order takes no command at all.
    const late = await orderCommand(box, customer, c.orderId, 'append', {
      venue: VENUE,
      lines: [{ productId: 'woda', quantity: 1 }],
    });
    expect(await nextCodes(cws, late)).toEqual([expect.objectContaining({ code: 'orderClosed', args: [c.orderId] })]);
    const again = await orderCommand(box, staff, c.orderId, 'cancel', {});
    expect(await nextCodes(sws, again)).toEqual([expect.objectContaining({ code: 'orderClosed' })]);
  });

  test('complete straight from ORDERED is allowed', async () => {
    const { c, order } = await created([{ productId: 'woda', quantity: 1 }]);
    await submitted(c.orderId);
    await orderCommand(box, staff, c.orderId, 'complete', { claimCode: order.claimCode });
    expect(await nextChange(cws, c.orderId)).toMatchObject({ status: 'COMPLETED', completed: true, closed: true });
    await nextChange(sws, c.orderId);
  });
});

describe('editing the basket', () => {
  test('update changes quantities and remove deletes NEW lines; editTotal follows', async () => {
    const { c } = await created([
      { productId: 'zurek', quantity: 1 },
      { productId: 'sernik', quantity: 1 },
      { productId: 'woda', quantity: 1 },
    ]);
    const u = await orderCommand(box, customer, c.orderId, 'update', {
      venue: VENUE,
      lines: [{ id: c.lines[0], quantity: 3 }],
    });
    expect(u).toEqual({ correlationId: expect.stringMatching(UUID), orderId: c.orderId, lines: [c.lines[0]] });
    const updated = await nextChange(cws, c.orderId);
    expect(linesOf(updated).map((l) => [l.id, l.quantity])).toEqual([
      [c.lines[0], 3],
      [c.lines[1], 1],
      [c.lines[2], 1],
    ]);
    expect(updated.editTotal).toBe('75.00');

    await orderCommand(box, customer, c.orderId, 'remove', { venue: VENUE, lines: [c.lines[1]] });
    const removed = await nextChange(cws, c.orderId);
    expect(linesOf(removed).map((l) => l.id)).toEqual([c.lines[0], c.lines[2]]);
    expect(removed.editTotal).toBe('60.00');

    // Lines appended after a removal keep their place at the end.
    const a = await orderCommand(box, customer, c.orderId, 'append', {
      venue: VENUE,
      lines: [{ productId: 'kompot', quantity: 1 }],
    });
    expect(linesOf(await nextChange(cws, c.orderId)).map((l) => l.id)).toEqual([c.lines[0], c.lines[2], a.lines[0]]);
  });

  test('invalidLine: a line not in the order, removed already, or in another bucket; all offenders are named', async () => {
    const { c } = await created([
      { productId: 'zurek', quantity: 1 },
      { productId: 'woda', quantity: 1 },
    ]);
    const other = await created([{ productId: 'kompot', quantity: 1 }]);
    const stranger = '33333333-3333-4333-8333-333333333333';
    const u = await orderCommand(box, customer, c.orderId, 'update', {
      venue: VENUE,
      lines: [
        { id: c.lines[0], quantity: 2 },
        { id: other.c.lines[0], quantity: 2 },
        { id: stranger, quantity: 1 },
      ],
    });
    expect(await nextCodes(cws, u)).toEqual([
      { code: 'invalidLine', message: expect.any(String), args: [other.c.lines[0]] },
      { code: 'invalidLine', message: expect.any(String), args: [stranger] },
    ]);
    await orderCommand(box, customer, c.orderId, 'remove', { venue: VENUE, lines: [c.lines[1]] });
    await nextChange(cws, c.orderId);
    const r = await orderCommand(box, customer, c.orderId, 'remove', { venue: VENUE, lines: [c.lines[1]] });
    expect(await nextCodes(cws, r)).toEqual([expect.objectContaining({ code: 'invalidLine', args: [c.lines[1]] })]);
    // Nothing of the rejected update applied (atomic).
    const got = (await (await box.get(`/ordering-api/api/order/${c.orderId}`, customer)).json()) as OrderPayload;
    expect(linesOf(got).map((l) => l.quantity)).toEqual([1]);
    // A venue the order has no bucket for.
    const v = await orderCommand(box, customer, c.orderId, 'update', {
      venue: DEMO.venues[1]!.id,
      lines: [{ id: c.lines[0], quantity: 2 }],
    });
    expect(await nextCodes(cws, v)).toEqual([
      expect.objectContaining({ code: 'invalidVenue', args: [DEMO.venues[1]!.id] }),
    ]);
  });

  test('invalidLine: an ORDERED line of a tab cannot be updated or removed', async () => {
    const { c } = await created([{ productId: 'piwo', quantity: 1 }], 'DINE_IN_OPEN');
    await submitted(c.orderId);
    const u = await orderCommand(box, customer, c.orderId, 'update', {
      venue: VENUE,
      lines: [{ id: c.lines[0], quantity: 2 }],
    });
    expect(await nextCodes(cws, u)).toEqual([expect.objectContaining({ code: 'invalidLine', args: [c.lines[0]] })]);
    const r = await orderCommand(box, customer, c.orderId, 'remove', { venue: VENUE, lines: [c.lines[0]] });
    expect(await nextCodes(cws, r)).toEqual([expect.objectContaining({ code: 'invalidLine', args: [c.lines[0]] })]);
  });
});

describe('business codes', () => {
  test('emptyOrder: a submit with no NEW line', async () => {
    const { c } = await created();
    const s = await orderCommand(box, customer, c.orderId, 'submit');
    expect(await nextCodes(cws, s)).toEqual([{ code: 'emptyOrder', message: expect.any(String), args: [c.orderId] }]);
    // An ORDERED take-away has no NEW line left either.
    const full = await created([{ productId: 'woda', quantity: 1 }]);
    await submitted(full.c.orderId);
    const again = await orderCommand(box, customer, full.c.orderId, 'submit');
    expect(await nextCodes(cws, again)).toEqual([expect.objectContaining({ code: 'emptyOrder' })]);
  });

  test('minOrderValue: DELIVERY below the venue minimum names venue, required and actual', async () => {
    const { c } = await created([{ productId: 'woda', quantity: 1 }], 'DELIVERY');
    const s = await orderCommand(box, customer, c.orderId, 'submit');
    expect(await nextCodes(cws, s)).toEqual([
      { code: 'minOrderValue', message: expect.any(String), args: [VENUE, '40.00', '6.00'] },
    ]);
    await orderCommand(box, customer, c.orderId, 'append', {
      venue: VENUE,
      lines: [{ productId: 'schabowy', quantity: 1 }],
    });
    expect((await nextChange(cws, c.orderId)).editTotal).toBe('40.00');
    expect(await submitted(c.orderId)).toMatchObject({ status: 'ORDERED', total: '40.00' });
  });

  test('invalidTransition names the current status and the command', async () => {
    const { c, order } = await created([{ productId: 'woda', quantity: 1 }]);
    const early = await orderCommand(box, staff, c.orderId, 'ready');
    expect(await nextCodes(sws, early)).toEqual([
      { code: 'invalidTransition', message: expect.any(String), args: ['NEW', 'ready'] },
    ]);
    const complete = await orderCommand(box, staff, c.orderId, 'complete', { claimCode: order.claimCode });
    expect(await nextCodes(sws, complete)).toEqual([expect.objectContaining({ args: ['NEW', 'complete'] })]);
    await submitted(c.orderId);
    const append = await orderCommand(box, customer, c.orderId, 'append', {
      venue: VENUE,
      lines: [{ productId: 'woda', quantity: 1 }],
    });
    expect(await nextCodes(cws, append)).toEqual([
      expect.objectContaining({ code: 'invalidTransition', args: ['ORDERED', 'append'] }),
    ]);
    const update = await orderCommand(box, customer, c.orderId, 'update', {
      venue: VENUE,
      lines: [{ id: c.lines[0], quantity: 2 }],
    });
    expect(await nextCodes(cws, update)).toEqual([
      expect.objectContaining({ code: 'invalidTransition', args: ['ORDERED', 'update'] }),
    ]);
    await orderCommand(box, staff, c.orderId, 'ready');
    await nextChange(cws, c.orderId);
    await nextChange(sws, c.orderId);
    const twice = await orderCommand(box, staff, c.orderId, 'ready');
    expect(await nextCodes(sws, twice)).toEqual([
      expect.objectContaining({ code: 'invalidTransition', args: ['READY', 'ready'] }),
    ]);
    // Only a tab goes back from READY to ORDERED.
    const submit = await orderCommand(box, customer, c.orderId, 'submit');
    expect(await nextCodes(cws, submit)).toEqual([
      expect.objectContaining({ code: 'invalidTransition', args: ['READY', 'submit'] }),
    ]);
  });

  test('forbidden: staff commands from a customer, and a customer cancelling what the kitchen has', async () => {
    const { c, order } = await created([{ productId: 'zurek', quantity: 1 }]);
    await submitted(c.orderId);
    const ready = await orderCommand(box, customer, c.orderId, 'ready');
    expect(await nextCodes(cws, ready)).toEqual([{ code: 'forbidden', message: expect.any(String), args: ['ready'] }]);
    const complete = await orderCommand(box, customer, c.orderId, 'complete', { claimCode: order.claimCode });
    expect(await nextCodes(cws, complete)).toEqual([
      expect.objectContaining({ code: 'forbidden', args: ['complete'] }),
    ]);
    const cancel = await orderCommand(box, customer, c.orderId, 'cancel', { reason: 'changed my mind' });
    expect(await nextCodes(cws, cancel)).toEqual([expect.objectContaining({ code: 'forbidden', args: ['cancel'] })]);
    // A stranger does not learn the order exists, staff command or not.
    const stranger = await box.token();
    const sock = await openSocket(box.wsUrl('/ordering-api/ws'), stranger.access_token);
    await sock.next('HELLO');
    const peek = await orderCommand(box, stranger.access_token, c.orderId, 'ready');
    expect(await nextCodes(sock, peek)).toEqual([expect.objectContaining({ code: 'orderNotFound' })]);
    sock.close();
  });

  test('staff cancel an ORDERED order: lines CANCELLED, totals 0, claim code freed, a cancel slip with the reason', async () => {
    const { c } = await created([
      { productId: 'zurek', quantity: 2 },
      { productId: 'woda', quantity: 1 },
    ]);
    await submitted(c.orderId);
    await orderCommand(box, staff, c.orderId, 'cancel', { reason: 'kitchen fire' });
    const cancelled = await nextChange(cws, c.orderId);
    await nextChange(sws, c.orderId);
    expect(cancelled).toMatchObject({
      status: 'CANCELLED',
      closed: true,
      completed: false,
      total: '0.00',
      editTotal: '0.00',
    });
    expect(linesOf(cancelled).map((l) => l.status)).toEqual(['CANCELLED', 'CANCELLED']);
    expect(bucketsOpen(box, c.orderId)).toEqual([0]);
    const jobs = printJobs(box, c.orderId);
    expect(jobs.map((j) => [j.kind, j.round])).toEqual([
      ['kitchen', 1],
      ['claim', 1],
      ['cancel', 1],
    ]);
    expect(jobs[2]!.payload).toMatchObject({
      kind: 'cancel',
      reason: 'kitchen fire',
      total: '42.00',
      orderTotal: '0.00',
      lines: [expect.objectContaining({ text: '2 x Żurek' }), expect.objectContaining({ text: '1 x Woda mineralna' })],
    });
  });

  test('a customer cancels a NEW order: no slip, since the kitchen never had it', async () => {
    const { c } = await created([{ productId: 'zurek', quantity: 1 }]);
    const res = await box.post(`/ordering-api/api/order/${c.orderId}/cancel`, customer, '');
    expect(res.status).toBe(200);
    const cancelled = await nextChange(cws, c.orderId);
    expect(cancelled).toMatchObject({ status: 'CANCELLED', closed: true, editTotal: '0.00' });
    expect(linesOf(cancelled)[0]!.status).toBe('CANCELLED');
    expect(printJobs(box, c.orderId)).toEqual([]);
    const submit = await orderCommand(box, customer, c.orderId, 'submit');
    expect(await nextCodes(cws, submit)).toEqual([expect.objectContaining({ code: 'orderClosed' })]);
  });
});

describe('DINE_IN_OPEN tab', () => {
  test('three rounds: each submit orders its round and prints its own kitchen ticket; READY goes back to ORDERED', async () => {
    const { c, order } = await created(
      [
        { productId: 'piwo', quantity: 2 },
        { productId: 'zurek', quantity: 1 },
      ],
      'DINE_IN_OPEN',
    );
    expect(await submitted(c.orderId)).toMatchObject({ status: 'ORDERED', total: '46.00', editTotal: '0.00' });

    const r2 = await orderCommand(box, customer, c.orderId, 'append', {
      venue: VENUE,
      lines: [{ productId: 'ges', quantity: 1 }],
    });
    expect(await nextChange(cws, c.orderId)).toMatchObject({ status: 'ORDERED', total: '46.00', editTotal: '58.00' });
    expect(await submitted(c.orderId)).toMatchObject({ status: 'ORDERED', total: '104.00', editTotal: '0.00' });

    await orderCommand(box, staff, c.orderId, 'ready');
    expect((await nextChange(cws, c.orderId)).status).toBe('READY');
    await nextChange(sws, c.orderId);

    const r3 = await orderCommand(box, customer, c.orderId, 'append', {
      venue: VENUE,
      lines: [
        { productId: 'sernik', quantity: 2 },
        { productId: 'piwo', quantity: 1 },
      ],
    });
    expect(await nextChange(cws, c.orderId)).toMatchObject({ status: 'READY', editTotal: '44.00' });
    await orderCommand(box, customer, c.orderId, 'update', { venue: VENUE, lines: [{ id: r3.lines[0], quantity: 1 }] });
    expect((await nextChange(cws, c.orderId)).editTotal).toBe('29.00');
    const third = await submitted(c.orderId);
    expect(third).toMatchObject({ status: 'ORDERED', total: '133.00', editTotal: '0.00' });
    expect(linesOf(third).every((l) => l.status === 'ORDERED')).toBe(true);

    await orderCommand(box, staff, c.orderId, 'complete', { claimCode: order.claimCode });
    expect(await nextChange(cws, c.orderId)).toMatchObject({ status: 'COMPLETED', total: '133.00' });
    await nextChange(sws, c.orderId);

    const jobs = printJobs(box, c.orderId);
    expect(jobs.map((j) => [j.kind, j.round])).toEqual([
      ['kitchen', 1],
      ['claim', 1],
      ['kitchen', 2],
      ['kitchen', 3],
    ]);
    const kitchen = jobs.filter((j) => j.kind === 'kitchen');
    expect(kitchen.map((j) => j.payload.lines.map((l) => l.text))).toEqual([
      ['2 x Piwo z beczki', '1 x Żurek'],
      ['1 x Gęś pieczona'],
      ['1 x Sernik krakowski', '1 x Piwo z beczki'],
    ]);
    expect(kitchen.map((j) => j.payload.total)).toEqual(['46.00', '58.00', '29.00']);
    expect(kitchen.map((j) => j.payload.round)).toEqual([1, 2, 3]);
    expect(
      kitchen.every((j) => j.payload.orderType === 'DINE_IN_OPEN' && j.payload.claimCode === order.claimCode),
    ).toBe(true);
    expect(r2.lines).toHaveLength(1);
  });

  test('complete drops a round that was never submitted', async () => {
    const { c, order } = await created([{ productId: 'piwo', quantity: 1 }], 'DINE_IN_OPEN');
    await submitted(c.orderId);
    await orderCommand(box, customer, c.orderId, 'append', {
      venue: VENUE,
      lines: [{ productId: 'piwo', quantity: 1 }],
    });
    expect((await nextChange(cws, c.orderId)).editTotal).toBe('14.00');
    await orderCommand(box, staff, c.orderId, 'complete', { claimCode: order.claimCode });
    const done = await nextChange(cws, c.orderId);
    await nextChange(sws, c.orderId);
    expect(done).toMatchObject({ status: 'COMPLETED', total: '14.00', editTotal: '0.00' });
    expect(linesOf(done).map((l) => l.status)).toEqual(['ORDERED', 'CANCELLED']);
  });
});

describe('bad bodies are 400 before anything is queued', () => {
  const id = '44444444-4444-4444-8444-444444444444';
  const cases: [string, unknown, string][] = [
    ['update', { venue: VENUE, lines: [] }, '/lines'],
    ['update', { venue: VENUE, lines: [{ id: 'x', quantity: 1 }] }, '/lines/0/id'],
    ['update', { venue: VENUE, lines: [{ id, quantity: 0 }] }, '/lines/0/quantity'],
    ['update', { venue: VENUE, lines: [{ id, quantity: 1.5 }] }, '/lines/0/quantity'],
    [
      'update',
      {
        venue: VENUE,
        lines: [
          { id, quantity: 1 },
          { id, quantity: 2 },
        ],
      },
      '/lines/1/id',
    ],
    ['update', { lines: [{ id, quantity: 1 }] }, '/venue'],
    ['remove', { venue: VENUE, lines: ['x'] }, '/lines/0'],
    ['remove', { venue: VENUE, lines: [id, id] }, '/lines/1'],
    ['remove', { venue: 'nope', lines: [id] }, '/venue'],
    ['complete', {}, '/claimCode'],
    ['complete', { claimCode: '12345' }, '/claimCode'],
    ['complete', { claimCode: 123456 }, '/claimCode'],
    ['cancel', { reason: 42 }, '/reason'],
    ['cancel', { reason: 'x'.repeat(201) }, '/reason'],
    ['submit', [], '/'],
    ['ready', 'now', '/'],
  ];
  test.each(cases)('%s %j -> invalidField %s', async (name, body, pointer) => {
    const res = await box.post(`/ordering-api/api/order/${id}/${name}`, staff, JSON.stringify(body));
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({
      codes: expect.arrayContaining([expect.objectContaining({ code: 'invalidField', args: [pointer] })]),
    });
  });

  test('malformed JSON is invalidBody, a non-UUID order id 404, complete without a body 400', async () => {
    const bad = await box.post(`/ordering-api/api/order/${id}/submit`, customer, '{');
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ codes: [{ code: 'invalidBody' }] });
    expect((await box.post('/ordering-api/api/order/not-a-uuid/submit', customer, '{}')).status).toBe(404);
    const empty = await box.post(`/ordering-api/api/order/${id}/complete`, staff, '');
    expect(empty.status).toBe(400);
    expect((await box.post(`/ordering-api/api/order/${id}/submit`, undefined, '{}')).status).toBe(401);
  });
});
