import Database from 'better-sqlite3';
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { DEMO, startTestBox, type TestBox, UNLIMITED_CUSTOMER } from './support/box.js';
import { linesOf, nextChange, nextCodes, orderCommand, type OrderPayload } from './support/lifecycle.js';
import { command, newOrder } from './support/orders.js';
import { openSocket, type TestSocket } from './support/socket.js';

// The defaults (native-config/venue-box.jsonc "ordering"): 400 lines per order, 20 open orders per customer;
// an order is worth at most 10,000,000.00 whatever the config. The customer's command rate is lifted: what a
// large order costs in it is test/command-rate.test.ts's.
let box: TestBox;
let customer: string;
let cws: TestSocket;

beforeAll(async () => {
  // Frames of a 400-line order are ~170 KB: the reading socket gets a window of many of them (docs/api.md "Limits of the socket").
  box = await startTestBox({ config: { ...UNLIMITED_CUSTOMER, sockets: { maxUnacknowledgedBytes: 4 * 1024 * 1024 } } });
  customer = (await box.token()).access_token;
  cws = await openSocket(box.wsUrl('/ordering-api/ws'), customer);
  await cws.next('HELLO');
});
afterAll(async () => {
  cws?.close();
  await box?.stop();
});

const VENUE = DEMO.openVenue;
const lines = (n: number, productId = 'zurek', quantity = 1) =>
  Array.from({ length: n }, () => ({ productId, quantity }));
const append = (orderId: string, n: number, productId?: string, quantity?: number) =>
  orderCommand(box, customer, orderId, 'append', { venue: VENUE, lines: lines(n, productId, quantity) });
const current = async (orderId: string): Promise<OrderPayload> =>
  (await (await box.get(`/ordering-api/api/order/${orderId}`, customer)).json()) as OrderPayload;
/** The database and its WAL together: what the box has written to disk. */
const diskBytes = (): number =>
  ['venue-box.db', 'venue-box.db-wal'].reduce(
    (sum, f) => sum + (statSync(join(box.dataDir, f), { throwIfNoEntry: false })?.size ?? 0),
    0,
  );

describe('order bounds', () => {
  test('an order stops at 400 lines: appends past it get tooManyLines, change nothing and write little', async () => {
    const c = await command(box, customer, 'new', newOrder(VENUE, lines(200)));
    expect(linesOf(await nextChange(cws, c.orderId))).toHaveLength(200);
    await append(c.orderId, 200);
    const full = await nextChange(cws, c.orderId);
    expect(linesOf(full)).toHaveLength(400);

    const before = diskBytes();
    for (let i = 0; i < 20; i++) {
      const refused = await append(c.orderId, i === 0 ? 1 : 200);
      expect(await nextCodes(cws, refused)).toEqual([
        { code: 'tooManyLines', message: expect.any(String), args: [c.orderId, '400'] },
      ]);
    }
    const after = await current(c.orderId);
    expect(linesOf(after)).toHaveLength(400);
    expect(after.editTotal).toBe(full.editTotal);
    // 20 refused commands (their bodies, 20 NOTIFICATIONs); unbounded, the same appends wrote tens of MB.
    expect(diskBytes() - before).toBeLessThan(3 * 1024 * 1024);
    // A refused command's body is not kept (only what it was and why): a flood of them cannot grow the file.
    const db = new Database(join(box.dataDir, 'venue-box.db'), { readonly: true });
    const refusedBodies = db.prepare("SELECT DISTINCT body_json FROM order_commands WHERE outcome = 'rejected'").all();
    db.close();
    expect(refusedBodies).toEqual([{ body_json: '{}' }]);

    // A removed line makes room for exactly one more.
    await orderCommand(box, customer, c.orderId, 'remove', { venue: VENUE, lines: [linesOf(after)[0]!.id] });
    expect(linesOf(await nextChange(cws, c.orderId))).toHaveLength(399);
    await append(c.orderId, 1);
    expect(linesOf(await nextChange(cws, c.orderId))).toHaveLength(400);
  });

  test('an order is worth at most 10,000,000.00: append and update past it get orderValueTooHigh', async () => {
    // schabowy costs 34.00: 200 lines of 999 are 6,793,200.00.
    const c = await command(box, customer, 'new', newOrder(VENUE, lines(200, 'schabowy', 999)));
    expect(await nextChange(cws, c.orderId)).toMatchObject({ editTotal: '6793200.00' });
    const tooMuch = { code: 'orderValueTooHigh', message: expect.any(String), args: [c.orderId, '10000000.00'] };
    expect(await nextCodes(cws, await append(c.orderId, 100, 'schabowy', 999))).toEqual([tooMuch]);

    await append(c.orderId, 94, 'schabowy', 999); // 9,986,004.00
    await nextChange(cws, c.orderId);
    await append(c.orderId, 1, 'schabowy', 1); // 9,986,038.00
    const last = linesOf(await nextChange(cws, c.orderId)).at(-1)!;
    const update = await orderCommand(box, customer, c.orderId, 'update', {
      venue: VENUE,
      lines: [{ id: last.id, quantity: 999 }],
    });
    expect(await nextCodes(cws, update)).toEqual([tooMuch]);
    expect(await current(c.orderId)).toMatchObject({ editTotal: '9986038.00' });
  });

  test('a customer may have 20 open orders; the 21st new gets tooManyOpenOrders until one closes; staff are not limited', async () => {
    const guest = await box.token();
    const gws = await openSocket(box.wsUrl('/ordering-api/ws'), guest.access_token);
    await gws.next('HELLO');
    const open: string[] = [];
    for (let i = 0; i < 20; i++) {
      const c = await command(box, guest.access_token, 'new', newOrder(VENUE));
      await nextChange(gws, c.orderId);
      open.push(c.orderId);
    }
    const refused = await command(box, guest.access_token, 'new', newOrder(VENUE, lines(1)));
    expect(await nextCodes(gws, refused)).toEqual([
      { code: 'tooManyOpenOrders', message: expect.any(String), args: ['20'] },
    ]);

    await orderCommand(box, guest.access_token, open[0]!, 'cancel');
    await nextChange(gws, open[0]!);
    const again = await command(box, guest.access_token, 'new', newOrder(VENUE));
    expect((await nextChange(gws, again.orderId)).status).toBe('NEW');
    gws.close();

    const staff = (await box.token('kelner', 'kelner-demo-1')).access_token;
    const sws = await openSocket(box.wsUrl('/ordering-api/ws'), staff);
    await sws.next('HELLO');
    for (let i = 0; i < 21; i++) await nextChange(sws, (await command(box, staff, 'new', newOrder(VENUE))).orderId);
    sws.close();
  });
});

describe('configured bounds (ordering.maxLines 150, ordering.maxOpenPerAnonymousUser 2)', () => {
  let small: TestBox;
  beforeAll(async () => {
    small = await startTestBox({
      config: { ordering: { ...UNLIMITED_CUSTOMER.ordering, maxLines: 150, maxOpenPerAnonymousUser: 2 } },
    });
  });
  afterAll(async () => {
    await small?.stop();
  });

  test('a new order past maxLines is refused whole; a third open order is refused', async () => {
    const token = (await small.token()).access_token;
    const ws = await openSocket(small.wsUrl('/ordering-api/ws'), token);
    await ws.next('HELLO');
    const big = await command(small, token, 'new', newOrder(VENUE, lines(151)));
    expect(await nextCodes(ws, big)).toEqual([
      expect.objectContaining({ code: 'tooManyLines', args: [big.orderId, '150'] }),
    ]);
    expect((await small.get(`/ordering-api/api/order/${big.orderId}`, token)).status).toBe(404);

    for (let i = 0; i < 2; i++) {
      const c = await command(small, token, 'new', newOrder(VENUE, lines(150)));
      expect(linesOf(await nextChange(ws, c.orderId))).toHaveLength(150);
    }
    const third = await command(small, token, 'new', newOrder(VENUE));
    expect(await nextCodes(ws, third)).toEqual([expect.objectContaining({ code: 'tooManyOpenOrders', args: ['2'] })]);
    ws.close();
  });
});
