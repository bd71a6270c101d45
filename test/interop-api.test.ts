import Database from 'better-sqlite3';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { DEMO, startTestBox, type TestBox } from './support/box.js';
import { command, newOrder } from './support/orders.js';
import { openSocket, type TestSocket } from './support/socket.js';

// What the API tells clients, as docs/api.md shapes it plus the few fields it adds: the order's
// contact, sold-out products in the menu tree, kitchen notes, coordinates as clients print them.
let box: TestBox;
let staff: string;
beforeAll(async () => {
  box = await startTestBox();
  staff = (await box.token(DEMO.staff.username, DEMO.staff.password)).access_token;
});
afterAll(async () => {
  await box.stop();
});

const VENUE = DEMO.openVenue;
const change = async (ws: TestSocket, orderId: string) => {
  for (;;) {
    const f = await ws.next('ORDER_CHANGE');
    if (f.payload.id === orderId) return f.payload;
  }
};

describe('contact', () => {
  const contact = { name: 'Anna', phone: '+48 600 100 200', email: 'anna@example.pl' };

  test("a delivery's contact is in the Order for its own users and for staff, nowhere else", async () => {
    const customer = await box.token();
    const ws = await openSocket(box.wsUrl('/ordering-api/ws'), customer.access_token);
    const venueWs = await openSocket(box.wsUrl(`/ordering-api/ws?venue=${VENUE}`), staff);
    await Promise.all([ws.next('HELLO'), venueWs.next('HELLO')]);
    const c = await command(box, customer.access_token, 'new', {
      ...newOrder(VENUE, [{ productId: 'zurek', quantity: 1 }], 'DELIVERY'),
      contact,
    });

    expect((await change(ws, c.orderId)).contact).toEqual(contact);
    expect((await change(venueWs, c.orderId)).contact).toEqual(contact);
    const mine = await box.get(`/ordering-api/api/order/${c.orderId}`, customer.access_token);
    expect(((await mine.json()) as { contact: unknown }).contact).toEqual(contact);
    const list = (await (await box.get(`/ordering-api/api/orders?venue=${VENUE}&limit=5`, staff)).json()) as {
      items: { id: string; contact?: unknown }[];
    };
    expect(list.items.find((o) => o.id === c.orderId)!.contact).toEqual(contact);
    // Another customer does not see the order at all.
    const other = await box.token();
    expect((await box.get(`/ordering-api/api/order/${c.orderId}`, other.access_token)).status).toBe(404);
    // The central's copy carries the contact in its detail only, not twice.
    const db = new Database(join(box.dataDir, 'venue-box.db'), { readonly: true });
    try {
      const rows = db
        .prepare("SELECT envelope FROM sync_outbox WHERE kind = 'order.changed' AND aggregate_id = ?")
        .all(c.orderId) as { envelope: string }[];
      expect(rows.length).toBeGreaterThan(0);
      for (const r of rows) expect(r.envelope.split('+48 600 100 200').length - 1).toBe(1);
    } finally {
      db.close();
    }
    ws.close();
    venueWs.close();
  });

  test('an order without contact has no contact field', async () => {
    const customer = await box.token();
    const c = await command(box, customer.access_token, 'new', newOrder(VENUE));
    await new Promise((r) => setTimeout(r, 100));
    const order = (await (
      await box.get(`/ordering-api/api/order/${c.orderId}`, customer.access_token)
    ).json()) as Record<string, unknown>;
    expect(order).not.toHaveProperty('contact');
  });
});

describe('sold out in the menu tree', () => {
  type Node = { kind: string; id: string; items?: Node[]; soldOut?: boolean };
  const products = (n: Node): Node[] => (n.kind === 'svc/product' ? [n] : n.items!.flatMap(products));
  const menuOf = async (venue: string) => {
    const t = await box.token();
    return (await (
      await box.get(`/menu-api/api/menu/${DEMO.menu}?channel=TAKE_AWAY&instance=${venue}`, t.access_token)
    ).json()) as { root: Node; locks: { productId: string }[] };
  };
  const lock = (venue: string, locked: boolean) =>
    fetch(box.url(`/menu-api/api/menu/${DEMO.menu}/locks`), {
      method: 'PUT',
      headers: { authorization: `Bearer ${staff}`, 'content-type': 'application/json' },
      body: JSON.stringify({ venue, productId: 'barszcz', locked, reason: 'no beetroot' }),
    });

  test('a sold-out product carries soldOut: true in the tree (and stays in locks); others carry nothing', async () => {
    expect((await lock(VENUE, true)).status).toBe(200);
    try {
      const menu = await menuOf(VENUE);
      const all = products(menu.root);
      expect(all.filter((p) => p.soldOut === true).map((p) => p.id)).toEqual(['barszcz']);
      expect(all.filter((p) => p.id !== 'barszcz').every((p) => !('soldOut' in p))).toBe(true);
      expect(menu.locks.map((l) => l.productId)).toEqual(['barszcz']);
      // Venues sharing the menu sell out separately.
      const otherVenue = DEMO.venues.find((v) => v.id !== VENUE && v.menu === DEMO.menu)!.id;
      expect(products((await menuOf(otherVenue)).root).some((p) => 'soldOut' in p)).toBe(false);
    } finally {
      expect((await lock(VENUE, false)).status).toBe(200);
    }
    expect(products((await menuOf(VENUE)).root).some((p) => 'soldOut' in p)).toBe(false);
  });
});

describe('coordinates', () => {
  const nearest = async (query: string) => {
    const t = await box.token();
    return box.get(`/venue-api/api/nearest?${query}`, t.access_token);
  };
  test.each([
    ['exponent form', 'lat=5.00614e1&lng=1.99366E%2B1'],
    ['more than 15 decimals', 'lat=50.06140000000000000001&lng=19.936600000000000000000001'],
    ['a leading plus and a trailing point', 'lat=%2B50.0614&lng=19.9366'],
    ['negative exponent', 'lat=5006.14e-2&lng=.199366e2'],
  ])('%s is a coordinate', async (_name, query) => {
    const res = await nearest(query);
    expect(res.status).toBe(200);
    // The same point as the plain decimals 50.0614, 19.9366, so the same order of venues.
    const plain = (await (await nearest('lat=50.0614&lng=19.9366')).json()) as { id: string }[];
    expect(((await res.json()) as { id: string }[]).map((v) => v.id)).toEqual(plain.map((v) => v.id));
  });
  test.each([
    ['lat=9.1e1&lng=0', 'lat'],
    ['lat=0&lng=1e309', 'lng'],
    ['lat=1e&lng=0', 'lat'],
    ['lat=e1&lng=0', 'lat'],
    ['lat=1.2.3&lng=0', 'lat'],
  ])('%s is refused naming the field', async (query, field) => {
    const res = await nearest(query);
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ codes: [{ code: 'invalidField', args: [field] }] });
  });
});

describe("kitchen notes (a line's extra.note)", () => {
  const line = (note: string) => ({ productId: 'zurek', quantity: 1, extra: { note } });

  test('shown in the Order and carried to the kitchen ticket', async () => {
    const customer = await box.token();
    const ws = await openSocket(box.wsUrl('/ordering-api/ws'), customer.access_token);
    await ws.next('HELLO');
    const note = `${'bez śmietany 🌶'.padEnd(139, '!')}🍋`; // 140 characters, two of them outside the BMP
    const c = await command(
      box,
      customer.access_token,
      'new',
      newOrder(VENUE, [line(note), { productId: 'kompot', quantity: 1 }]),
    );
    const order = (await change(ws, c.orderId)) as { buckets: { lines: { id: string; extra?: unknown }[] }[] };
    expect(order.buckets[0]!.lines.map((l) => l.extra)).toEqual([{ note }, undefined]);
    expect(order.buckets[0]!.lines[1]).not.toHaveProperty('extra');
    await command(box, customer.access_token, `${c.orderId}/append`, { venue: VENUE, lines: [line('na wynos')] });
    const appended = (await change(ws, c.orderId)) as typeof order;
    expect(appended.buckets[0]!.lines[2]!.extra).toEqual({ note: 'na wynos' });
    await command(box, customer.access_token, `${c.orderId}/submit`, {});
    await change(ws, c.orderId);
    // The kitchen ticket's print job holds each line's note (printed under the line: src/modules/printing/tickets.ts).
    await expect
      .poll(async () => {
        const jobs = (await (await box.get(`/printing-api/api/jobs?venue=${VENUE}&limit=50`, staff)).json()) as {
          items?: { orderId: string; kind: string }[];
        };
        return (jobs.items ?? [])
          .filter((j) => j.orderId === c.orderId)
          .map((j) => j.kind)
          .sort();
      })
      .toContain('kitchen');
    const db = new Database(join(box.dataDir, 'venue-box.db'), { readonly: true });
    try {
      const row = db
        .prepare("SELECT payload_json FROM print_jobs WHERE order_id = ? AND kind = 'kitchen'")
        .get(c.orderId) as { payload_json: string };
      const lines = (JSON.parse(row.payload_json) as { lines: { name: string; note?: string }[] }).lines;
      expect(lines.map((l) => l.note)).toEqual([note, undefined, 'na wynos']);
    } finally {
      db.close();
    }
    ws.close();
  });

  test.each([
    ['141 characters', 'x'.repeat(141)],
    ['a control character (an ESC would be a printer command)', 'bez\u001b@cebuli'],
    ['a newline', 'bez\ncebuli'],
    ['an empty note', ''],
  ])('%s is 400 invalidField naming the note', async (_name, note) => {
    const t = await box.token();
    const res = await box.post(
      '/ordering-api/api/order/new',
      t.access_token,
      newOrder(VENUE, [{ productId: 'kompot', quantity: 1 }, line(note)]),
    );
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({
      codes: [{ code: 'invalidField', args: ['/buckets/0/lines/1/extra/note'] }],
    });
  });

  test("another key in a line's extra is 400 too; append checks the same", async () => {
    const t = await box.token();
    const res = await box.post(
      '/ordering-api/api/order/new',
      t.access_token,
      newOrder(VENUE, [{ productId: 'kompot', quantity: 1, extra: { colour: 'red' } } as never]),
    );
    expect(res.status).toBe(400);
    const c = await command(box, t.access_token, 'new', newOrder(VENUE));
    const append = await box.post(`/ordering-api/api/order/${c.orderId}/append`, t.access_token, {
      venue: VENUE,
      lines: [line('y'.repeat(141))],
    });
    expect(append.status).toBe(400);
    expect(await append.json()).toMatchObject({ codes: [{ code: 'invalidField', args: ['/lines/0/extra/note'] }] });
  });
});
