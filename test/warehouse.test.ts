import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { DEMO, startTestBox, type TestBox } from './support/box.js';
import {
  BASE,
  call,
  codes,
  item,
  OTHER,
  otherStaff,
  otherTenantProvisioning,
  type Staff,
  staff,
  W1,
  W2,
  wpath,
} from './warehouse-client.js';

let box: TestBox;
let kelner: Staff;

beforeAll(async () => {
  const file = join(tmpdir(), `vb-other-tenant-${process.pid}.json`);
  writeFileSync(file, JSON.stringify(otherTenantProvisioning));
  box = await startTestBox({ config: { provisioningFile: file } });
  kelner = await staff(box);
});
afterAll(async () => {
  await box.stop();
});

const stockOf = async (w: string, ...ids: string[]) =>
  (await call(box, kelner, 'POST', wpath(w, '/stock'), { items: ids })).body;
const doc = (kind: string, body: unknown, w = W1, who = kelner) =>
  call(box, who, 'POST', wpath(w, `/documents/${kind}`), body);

describe('warehouses', () => {
  const id = '5a1e0000-0000-4000-8000-000000000001';
  test('create 201, same again 200, other name 409; read; update; unknown 404', async () => {
    expect(await call(box, kelner, 'POST', BASE, { id, name: 'Bar' })).toEqual({
      status: 201,
      body: { id, name: 'Bar' },
    });
    expect(await call(box, kelner, 'POST', BASE, { id, name: 'Bar' })).toEqual({
      status: 200,
      body: { id, name: 'Bar' },
    });
    const clash = await call(box, kelner, 'POST', BASE, { id, name: 'Other' });
    expect([clash.status, codes(clash.body)]).toEqual([409, [['conflict', id]]]);
    expect(await call(box, kelner, 'GET', `${BASE}/${id}`)).toEqual({ status: 200, body: { id, name: 'Bar' } });
    expect(await call(box, kelner, 'PUT', `${BASE}/${id}`, { id, name: 'Bar 2' })).toEqual({
      status: 200,
      body: { id, name: 'Bar 2' },
    });
    expect((await call(box, kelner, 'GET', `${BASE}/${id}`)).body.name).toBe('Bar 2');
    const unknown = '5a1e0000-0000-4000-8000-0000000000ff';
    expect((await call(box, kelner, 'GET', `${BASE}/${unknown}`)).status).toBe(404);
    expect(codes((await call(box, kelner, 'PUT', `${BASE}/${unknown}`, { id: unknown, name: 'x' })).body)).toEqual([
      ['notFound'],
    ]);
    expect((await call(box, kelner, 'GET', `${BASE}/not-a-uuid`)).status).toBe(404);
    expect(await call(box, kelner, 'GET', `${BASE}/${W1}`)).toEqual({
      status: 200,
      body: { id: W1, name: 'Magazyn Rynek' },
    });
  });

  test('bad warehouse bodies are 400 naming the field', async () => {
    expect(codes((await call(box, kelner, 'POST', BASE, { id: 'nope', name: 'x' })).body)).toEqual([
      ['invalidField', '/id'],
    ]);
    expect(codes((await call(box, kelner, 'POST', BASE, { id })).body)).toEqual([['invalidField', '/name']]);
    expect(codes((await call(box, kelner, 'POST', BASE, { id, name: '' })).body)).toEqual([['invalidField', '/name']]);
    const moved = await call(box, kelner, 'PUT', `${BASE}/${id}`, { id: W1, name: 'x' });
    expect([moved.status, codes(moved.body)]).toEqual([400, [['invalidField', '/id']]]);
    expect(codes((await call(box, kelner, 'POST', BASE, '{"id":')).body)).toEqual([['invalidBody']]);
  });
});

describe('auth', () => {
  test('scope write, x-tenant and x-user equal to the token: 401/403 otherwise', async () => {
    const path = wpath(W1, '/stock');
    const body = { items: ['a'] };
    expect(codes((await call(box, undefined, 'POST', path, body)).body)).toEqual([['unauthorized']]);
    const anon = await box.token();
    const anonHeaders = { authorization: `Bearer ${anon.access_token}`, 'x-tenant': DEMO.tenant, 'x-user': anon.UUID };
    const asAnon = await call(box, undefined, 'POST', path, body, anonHeaders);
    expect([asAnon.status, codes(asAnon.body)]).toEqual([403, [['forbidden']]]);
    const withHeaders = (h: Record<string, string>) => ({ ...kelner, headers: h });
    const authorization = kelner.headers.authorization!;
    // A missing x-tenant is a malformed request: 400 naming the header (docs/warehouse.md), not a refusal.
    const noTenant = await call(box, withHeaders({ authorization }), 'POST', path, body);
    expect([noTenant.status, codes(noTenant.body)]).toEqual([400, [['invalidField', 'x-tenant']]]);
    expect((await call(box, kelner, 'POST', path, body, { 'x-tenant': OTHER.tenant })).status).toBe(403);
    expect((await call(box, kelner, 'POST', path, body, { 'x-user': DEMO.tenant })).status).toBe(403);
    // x-user is required where the interface lists it: documents and locks.
    const noUser = withHeaders({ authorization, 'x-tenant': DEMO.tenant });
    expect((await call(box, noUser, 'POST', path, body)).status).toBe(200);
    const docNoUser = await call(box, noUser, 'POST', wpath(W1, '/documents/pz'), { items: [] });
    expect([docNoUser.status, codes(docNoUser.body)]).toEqual([403, [['forbidden']]]);
    expect((await call(box, noUser, 'POST', wpath(W1, '/locks'), { qty: 1, items: [] })).status).toBe(403);
    expect((await call(box, noUser, 'DELETE', wpath(W1, '/locks'))).status).toBe(403);
  });

  test("another tenant's warehouse is a 404; its ids are its own", async () => {
    const other = await otherStaff(box);
    expect((await call(box, other, 'GET', `${BASE}/${W1}`)).status).toBe(404);
    expect((await call(box, other, 'POST', wpath(W1, '/documents/pz'), { items: [item('a', 1)] })).status).toBe(404);
    expect((await call(box, other, 'POST', wpath(W1, '/stock'), { items: ['a'] })).status).toBe(404);
    expect((await call(box, other, 'POST', wpath(W1, '/locks'), { qty: 1, items: [] })).status).toBe(404);
    expect((await call(box, kelner, 'GET', `${BASE}/${OTHER.warehouse}`)).status).toBe(404);
    expect((await call(box, other, 'POST', BASE, { id: W1, name: 'Mine' })).status).toBe(201);
    expect((await call(box, kelner, 'GET', `${BASE}/${W1}`)).body.name).toBe('Magazyn Rynek');
    const mm = await doc('mm', { targetWarehouse: OTHER.warehouse, items: [item('a', 1)] });
    expect([mm.status, codes(mm.body)]).toEqual([400, [['invalidField', '/targetWarehouse']]]);
  });
});

describe('documents', () => {
  test('PZ stores and returns every field of Document and Item with the server fields', async () => {
    const items = [
      item('mleko', 10.5, 'l', { unitPrice: 3.2, total: 33.6, cat: ['nabiał'], extra: { lot: 'L1' } }),
      item('żółty_ser-1.2', 0.000001, 'kg'),
    ];
    const res = await doc('pz', { number: 'PZ-DOC-1', items, unlockItems: false, extra: { supplier: 'Mleczarnia' } });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      kind: 'PZ',
      warehouse: W1,
      number: 'PZ-DOC-1',
      user: kelner.userId,
      created: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      items,
      unlockItems: false,
      extra: { supplier: 'Mleczarnia' },
    });
    expect((await stockOf(W1, 'mleko', 'żółty_ser-1.2', 'never')).items).toEqual([
      { id: 'mleko', unit: 'l', qty: 10.5, locked: 0, available: 10.5 },
      { id: 'żółty_ser-1.2', unit: 'kg', qty: 0.000001, locked: 0, available: 0.000001 },
      { id: 'never', unit: null, qty: 0, locked: 0, available: 0 },
    ]);
  });

  test('same number and content returns the stored document (200); other content is a 409', async () => {
    const body = { number: 'PZ-RETRY', items: [item('retry', 2)], extra: { a: '1' } };
    const first = await doc('pz', body);
    const again = await doc('pz', {
      extra: { a: '1' },
      items: [{ qty: 2, unit: 'kg', id: 'retry' }],
      number: 'PZ-RETRY',
    });
    expect([first.status, again.status]).toEqual([201, 200]);
    expect(again.body).toEqual(first.body);
    const other = await doc('pz', { ...body, items: [item('retry', 3)] });
    expect([other.status, codes(other.body)]).toEqual([409, [['conflict', 'PZ-RETRY']]]);
    expect((await doc('wz', { number: 'PZ-RETRY', items: [item('retry', 1)] })).status).toBe(201); // per kind
    expect((await doc('pz', body, W2)).status).toBe(201); // per warehouse
    expect((await stockOf(W1, 'retry')).items[0].qty).toBe(1);
  });

  test('the server numbers documents sent without a number, per warehouse and kind', async () => {
    const a = (await doc('rw', { items: [] }, W2)).body.number as string;
    const b = (await doc('rw', { items: [] }, W2)).body.number as string;
    expect(a).toMatch(/^RW\/\d{4}\/\d\d\/\d{6}$/);
    expect(Number(b.slice(-6))).toBe(Number(a.slice(-6)) + 1);
    expect((await doc('inventory', { items: [] }, W2)).body.number).toMatch(/^INV\/\d{4}\/\d\d\/000001$/);
  });

  test('WZ and RW issue, MM moves, Inventory records counted minus booked', async () => {
    await doc('pz', { items: [item('flow', 10), item('flow2', 1)] });
    expect((await doc('wz', { items: [item('flow', 2)] })).body.kind).toBe('WZ');
    expect((await doc('rw', { items: [item('flow', 1.5)] })).body.kind).toBe('RW');
    const mm = await doc('mm', { targetWarehouse: W2, items: [item('flow', 3)] });
    expect([mm.status, mm.body.kind, mm.body.targetWarehouse]).toEqual([201, 'MM', W2]);
    expect((await stockOf(W1, 'flow')).items[0].qty).toBe(3.5);
    expect((await stockOf(W2, 'flow')).items[0].qty).toBe(3);
    const inv = await doc('inventory', { items: [item('flow', 5.25), item('flow2', 0), item('counted-new', 0)] });
    expect([inv.status, inv.body.kind]).toEqual([201, 'Inventory']);
    expect((await stockOf(W1, 'flow', 'flow2', 'counted-new')).items.map((i: { qty: number }) => i.qty)).toEqual([
      5.25, 0, 0,
    ]);
  });

  test('insufficient stock is a 409 naming every short item with what is available; nothing is written', async () => {
    await doc('pz', { items: [item('short1', 1), item('short2', 2), item('plenty', 100)] });
    const res = await doc('wz', {
      items: [item('plenty', 1), item('short1', 1.5), item('short2', 2.5), item('none', 1)],
    });
    expect(res.status).toBe(409);
    expect(codes(res.body)).toEqual([
      ['insufficientStock', 'short1', '1', '1.5'],
      ['insufficientStock', 'short2', '2', '2.5'],
      ['insufficientStock', 'none', '0', '1'],
    ]);
    // Two lines of one item add up.
    expect(codes((await doc('rw', { items: [item('short1', 0.6), item('short1', 0.6)] })).body)).toEqual([
      ['insufficientStock', 'short1', '1', '1.2'],
    ]);
    expect(codes((await doc('mm', { targetWarehouse: W2, items: [item('short2', 3)] })).body)[0]![0]).toBe(
      'insufficientStock',
    );
    expect((await stockOf(W1, 'plenty', 'short1')).items.map((i: { qty: number }) => i.qty)).toEqual([100, 1]);
  });

  test('an item is kept in one unit: another unit is a 409 unitMismatch; nothing is written', async () => {
    await doc('pz', { items: [item('unit1', 1, 'l')] });
    const res = await doc('pz', { items: [item('unit-ok', 1), item('unit1', 1, 'kg')] });
    expect([res.status, codes(res.body)]).toEqual([409, [['unitMismatch', 'unit1', 'l', 'kg']]]);
    const mixed = await doc('pz', { items: [item('unit2', 1, 'l'), item('unit2', 1, 'szt')] });
    expect(codes(mixed.body)).toEqual([['unitMismatch', 'unit2', 'l', 'szt']]);
    expect((await stockOf(W1, 'unit-ok', 'unit2')).items.map((i: { unit: string | null }) => i.unit)).toEqual([
      null,
      null,
    ]);
  });

  test('MM without, with the same or with an unknown targetWarehouse is a 400', async () => {
    const items = [item('mm-x', 1)];
    for (const extra of [
      {},
      { targetWarehouse: W1 },
      { targetWarehouse: '5a1e0000-0000-4000-8000-00000000dead' },
      { targetWarehouse: 'x' },
    ]) {
      const res = await doc('mm', { items, ...extra });
      expect([res.status, codes(res.body)]).toEqual([400, [['invalidField', '/targetWarehouse']]]);
    }
    expect(codes((await doc('pz', { items, targetWarehouse: W2 })).body)).toEqual([
      ['invalidField', '/targetWarehouse'],
    ]);
  });

  test('bad document input is a 400 naming the field', async () => {
    const bad = async (body: unknown, kind = 'pz') => {
      const res = await doc(kind, body);
      expect(res.status).toBe(400);
      return codes(res.body);
    };
    const many = Array.from({ length: 2049 }, (_, i) => item(`i${i}`, 1));
    expect(await bad({ items: many })).toEqual([['invalidField', '/items']]);
    expect((await doc('inventory', { items: many.slice(0, 2048).map((i) => ({ ...i, qty: 0 })) })).status).toBe(201);
    expect(await bad({ items: [item('a b', 1)] })).toEqual([['invalidField', '/items/0/id']]);
    expect(await bad({ items: [item('a/b', 1)] })).toEqual([['invalidField', '/items/0/id']]);
    expect(await bad({ items: [item('', 1)] })).toEqual([['invalidField', '/items/0/id']]);
    expect(await bad({ items: [item('ok', 0)] })).toEqual([['invalidField', '/items/0/qty']]);
    expect(await bad({ items: [item('ok', -1)] })).toEqual([['invalidField', '/items/0/qty']]);
    expect(await bad({ items: [item('ok', -1)] }, 'inventory')).toEqual([['invalidField', '/items/0/qty']]);
    expect(await bad({ items: [item('ok', '1' as unknown as number)] })).toEqual([['invalidField', '/items/0/qty']]);
    expect(await bad('{"items":[{"id":"ok","unit":"kg","qty":1e400}]}')).toEqual([['invalidField', '/items/0/qty']]);
    expect(await bad({ items: [item('ok', 1), item('ok2', 1.0000001)] })).toEqual([['invalidField', '/items/1/qty']]);
    expect(await bad({ items: [item('ok', 1), item('ok', 2)] }, 'inventory')).toEqual([
      ['invalidField', '/items/1/id'],
    ]);
    expect(await bad({ items: [{ id: 'ok', qty: 1 }] })).toEqual([['invalidField', '/items/0/unit']]);
    expect(await bad({ items: [item('ok', 1)], unlockItems: 'yes' })).toEqual([['invalidField', '/unlockItems']]);
    expect(await bad({ items: [item('ok', 1)], extra: { a: 1 } })).toEqual([['invalidField', '/extra/a']]);
    expect(await bad({})).toEqual([['invalidField', '/items']]);
    expect((await doc('xx', { items: [] })).status).toBe(404);
    expect((await stockOf(W1, 'ok', 'ok2')).items.map((i: { qty: number }) => i.qty)).toEqual([0, 0]);
  });

  test('bad stock queries are a 400', async () => {
    const q = (body: unknown) => call(box, kelner, 'POST', wpath(W1, '/stock'), body);
    expect(codes((await q({ items: Array.from({ length: 2049 }, (_, i) => `i${i}`) })).body)).toEqual([
      ['invalidField', '/items'],
    ]);
    expect(codes((await q({ items: ['ok', 'no way'] })).body)).toEqual([['invalidField', '/items/1']]);
    expect(codes((await q({})).body)).toEqual([['invalidField', '/items']]);
    expect((await q({ items: Array.from({ length: 2048 }, (_, i) => `i${i}`) })).body.items).toHaveLength(2048);
  });
});
