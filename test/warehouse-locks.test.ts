import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startTestBox, type TestBox } from './support/box.js';
import { call, codes, item, type Staff, staff, W1, W2, wpath } from './warehouse-client.js';

let box: TestBox;
let kelner: Staff;
let kuchnia: Staff;

// Locks last 2.5 s here, so expiry is seen long before the minute sweep runs.
const TTL_MS = 2500;
beforeAll(async () => {
  box = await startTestBox({ config: { warehouse: { lockTtlMinutes: TTL_MS / 60_000 } } });
  kelner = await staff(box);
  kuchnia = await staff(box, 'kuchnia', 'kuchnia-demo-1');
});
afterAll(async () => {
  await box.stop();
});

const pz = (...items: ReturnType<typeof item>[]) => call(box, kelner, 'POST', wpath(W1, '/documents/pz'), { items });
const lock = (who: Staff, body: unknown, w = W1) => call(box, who, 'POST', wpath(w, '/locks'), body);
const packets = (who: Staff, body: unknown) => call(box, who, 'POST', wpath(W1, '/locks/packets'), body);
const release = (who: Staff, body?: unknown) => call(box, who, 'DELETE', wpath(W1, '/locks'), body);
const stock = async (...ids: string[]) =>
  (await call(box, kelner, 'POST', wpath(W1, '/stock'), { items: ids })).body.items as {
    id: string;
    qty: number;
    locked: number;
    available: number;
  }[];

describe('lock as much as possible', () => {
  test('each item gets min(qty x item qty, available); locks show in stock', async () => {
    await pz(item('bulka', 10, 'szt'), item('maslo', 1.5, 'kg'));
    const res = await lock(kelner, {
      qty: 3,
      items: [item('bulka', 2, 'szt'), item('maslo', 0.75, 'kg'), item('ghost', 1, 'szt')],
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      warehouse: W1,
      expires: expect.any(String),
      items: [
        { id: 'bulka', unit: 'szt', requested: 6, locked: 6 },
        { id: 'maslo', unit: 'kg', requested: 2.25, locked: 1.5 },
        { id: 'ghost', unit: 'szt', requested: 3, locked: 0 },
      ],
    });
    expect(await stock('bulka', 'maslo')).toEqual([
      { id: 'bulka', unit: 'szt', qty: 10, locked: 6, available: 4 },
      { id: 'maslo', unit: 'kg', qty: 1.5, locked: 1.5, available: 0 },
    ]);
    // Another user gets what is left; the first user's locks keep it from issuing it.
    expect((await lock(kuchnia, { qty: 1, items: [item('bulka', 10, 'szt')] })).body.items[0].locked).toBe(4);
    const wz = await call(box, kelner, 'POST', wpath(W1, '/documents/wz'), { items: [item('bulka', 7, 'szt')] });
    expect([wz.status, codes(wz.body)]).toEqual([409, [['insufficientStock', 'bulka', '6', '7']]]);
  });

  test('release: named items or all of the caller’s locks, reporting what was released', async () => {
    await pz(item('rel1', 5), item('rel2', 5));
    await lock(kelner, { qty: 1, items: [item('rel1', 2), item('rel2', 3)] });
    await lock(kuchnia, { qty: 1, items: [item('rel1', 1)] });
    expect((await release(kelner, { items: ['rel1', 'not-locked'] })).body).toEqual({
      warehouse: W1,
      items: [{ id: 'rel1', unit: 'kg', released: 2 }],
    });
    const all = (await release(kelner)).body.items as { id: string }[];
    expect(all.map((i) => i.id)).toContain('rel2');
    expect(all.map((i) => i.id)).not.toContain('rel1');
    expect((await stock('rel1', 'rel2')).map((s) => s.locked)).toEqual([1, 0]);
    expect((await release(kelner)).body.items).toEqual([]);
  });

  test('bad lock bodies: 400 naming the field; a unit clash is 409; nothing is locked', async () => {
    await pz(item('lk', 5));
    const bad = async (body: unknown) => {
      const res = await lock(kelner, body);
      expect(res.status).toBe(400);
      return codes(res.body);
    };
    for (const qty of [0, -1, 1.5, 2_147_483_648, '1'])
      expect(await bad({ qty, items: [] })).toEqual([['invalidField', '/qty']]);
    expect(await bad({ items: [] })).toEqual([['invalidField', '/qty']]);
    expect(await bad({ qty: 1, items: Array.from({ length: 2049 }, (_, i) => item(`x${i}`, 1)) })).toEqual([
      ['invalidField', '/items'],
    ]);
    expect(await bad({ qty: 1, items: [item('bad id', 1)] })).toEqual([['invalidField', '/items/0/id']]);
    expect(await bad({ qty: 1, items: [item('lk', 0)] })).toEqual([['invalidField', '/items/0/qty']]);
    expect(await bad({ qty: 1, items: [item('lk', 1.1234567)] })).toEqual([['invalidField', '/items/0/qty']]);
    const clash = await lock(kelner, { qty: 1, items: [item('lk', 1), item('lk', 1, 'l')] });
    expect([clash.status, codes(clash.body)]).toEqual([409, [['unitMismatch', 'lk', 'kg', 'l']]]);
    expect((await stock('lk'))[0]!.locked).toBe(0);
    expect(
      (await lock(kelner, { qty: 2_147_483_647, items: [item('lk', 999_999_999.999999)] })).body.items[0].locked,
    ).toBe(5);
    expect(codes((await release(kelner, { items: ['bad id'] })).body)).toEqual([['invalidField', '/items/0']]);
    expect((await lock(kelner, { qty: 1, items: [] }, '5a1e0000-0000-4000-8000-00000000dead')).status).toBe(404);
  });
});

describe('lock packets', () => {
  test('each packet gets the largest whole number that fits, in body order', async () => {
    await pz(item('pk-bun', 5, 'szt'), item('pk-patty', 3, 'szt'), item('pk-cheese', 10, 'plaster'));
    const body =
      '{"packets":{"9":{"qty":2,"items":[{"id":"pk-bun","unit":"szt","qty":1},{"id":"pk-patty","unit":"szt","qty":2}]},' +
      '"burger":{"qty":4,"items":[{"id":"pk-bun","unit":"szt","qty":1},{"id":"pk-patty","unit":"szt","qty":1}]},' +
      '"1":{"qty":3,"items":[{"id":"pk-cheese","unit":"plaster","qty":4}]}}}';
    const res = await packets(kelner, body);
    expect(res.status).toBe(200);
    // "9" comes first in the body (JSON.parse would put it after "1"), so it takes the patties first.
    expect(res.body.packets).toEqual({
      9: { requested: 2, locked: 1 },
      burger: { requested: 4, locked: 1 },
      1: { requested: 3, locked: 2 },
    });
    expect(await stock('pk-bun', 'pk-patty', 'pk-cheese')).toEqual([
      { id: 'pk-bun', unit: 'szt', qty: 5, locked: 2, available: 3 },
      { id: 'pk-patty', unit: 'szt', qty: 3, locked: 3, available: 0 },
      { id: 'pk-cheese', unit: 'plaster', qty: 10, locked: 8, available: 2 },
    ]);
  });

  test('bad packet bodies are a 400 naming the field', async () => {
    const bad = async (body: unknown) => {
      const res = await packets(kelner, body);
      expect(res.status).toBe(400);
      return codes(res.body);
    };
    for (const qty of [0, -3, 2.5, 2_147_483_648]) {
      expect(await bad({ packets: { p: { qty, items: [] } } })).toEqual([['invalidField', '/packets/p/qty']]);
    }
    expect(await bad({ packets: { p: { qty: 1, items: [item('x y', 1)] } } })).toEqual([
      ['invalidField', '/packets/p/items/0/id'],
    ]);
    expect(await bad({ packets: { 'a/b': { qty: 1, items: [item('x', 1e-7)] } } })).toEqual([
      ['invalidField', '/packets/a~1b/items/0/qty'],
    ]);
    expect(await bad({ packets: { '': { qty: 1, items: [] } } })).toEqual([['invalidField', '/packets/']]);
    expect(await bad({})).toEqual([['invalidField', '/packets']]);
  });

  test('body order is read from the "packets" that JSON.parse keeps, at any depth of the rest of the body', async () => {
    await pz(item('pk-dup', 2, 'szt'));
    const packet = (qty: number) => `{"qty":${qty},"items":[{"id":"pk-dup","unit":"szt","qty":1}]}`;
    // A repeated key: JSON.parse keeps the last "packets"; the order must come from that one too.
    const repeated = await packets(
      kelner,
      `{"packets":{"1":${packet(1)}},"packets":{"2":${packet(2)},"1":${packet(1)}}}`,
    );
    expect(repeated.status).toBe(200);
    expect(repeated.body.packets).toEqual({ 2: { requested: 2, locked: 2 }, 1: { requested: 1, locked: 0 } });
    await release(kelner, { items: ['pk-dup'] });
    // A field nested deeper than a recursive parser's stack, beside the packets.
    const deep = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
    const nested = await packets(kelner, `{"packets":{"1":${packet(1)}},"note":${deep}}`);
    expect(nested.status).toBe(200);
    expect(nested.body.packets).toEqual({ 1: { requested: 1, locked: 1 } });
    await release(kelner, { items: ['pk-dup'] });
  });

  test('a packet named __proto__ is reported like any other (its stock is locked)', async () => {
    await pz(item('pk-proto', 2, 'szt'));
    const res = await packets(
      kelner,
      '{"packets":{"__proto__":{"qty":1,"items":[{"id":"pk-proto","unit":"szt","qty":1}]}}}',
    );
    expect(res.status).toBe(200);
    expect(Object.entries(res.body.packets as object)).toEqual([['__proto__', { requested: 1, locked: 1 }]]);
    expect((await stock('pk-proto'))[0]).toMatchObject({ locked: 1, available: 1 });
    await release(kelner, { items: ['pk-proto'] });
  });
});

describe('expiry and unlockItems', () => {
  test('expired locks never count, even before the sweep', async () => {
    await pz(item('exp', 2));
    await lock(kuchnia, { qty: 1, items: [item('exp', 2)] });
    expect((await stock('exp'))[0]!.available).toBe(0);
    await new Promise((r) => setTimeout(r, TTL_MS + 100));
    expect((await stock('exp'))[0]).toMatchObject({ locked: 0, available: 2 });
    expect((await call(box, kelner, 'POST', wpath(W1, '/documents/wz'), { items: [item('exp', 2)] })).status).toBe(201);
    expect((await release(kuchnia, { items: ['exp'] })).body.items).toEqual([]);
  });

  test("WZ with unlockItems releases the caller's locks on its items first", async () => {
    await pz(item('unl', 3), item('unl-other', 1));
    await lock(kelner, { qty: 1, items: [item('unl', 3), item('unl-other', 1)] });
    const plain = await call(box, kuchnia, 'POST', wpath(W1, '/documents/wz'), {
      items: [item('unl', 1)],
      unlockItems: true,
    });
    expect(codes(plain.body)).toEqual([['insufficientStock', 'unl', '0', '1']]);
    const res = await call(box, kelner, 'POST', wpath(W1, '/documents/wz'), {
      items: [item('unl', 1)],
      unlockItems: true,
    });
    expect([res.status, res.body.unlockItems]).toEqual([201, true]);
    expect(await stock('unl', 'unl-other')).toMatchObject([
      { qty: 2, locked: 0, available: 2 },
      { qty: 1, locked: 1, available: 0 },
    ]);
    expect((await lock(kelner, { qty: 1, items: [item('unl', 1)] }, W2)).body.items[0].locked).toBe(0);
  });
});
