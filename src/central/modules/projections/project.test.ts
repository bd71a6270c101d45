import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import demo from '../../../../native-config/demo.json';
import { envelopeText } from '../../../shared/sync-protocol.js';
import type { EnvelopeKind } from '../../../shared/sync-messages.js';
import { openEmbedded, type EmbeddedDatabase } from '../../db/embedded.js';
import { migrate } from '../../db/migrate.js';
import { createPool, type Pool } from '../../db/pool.js';
import { provision } from '../tenants/provision.js';
import { parseEvent, projectEvent, RuleBroken } from './project.js';

const tenant = demo.tenants[0]!.id;
const venue = demo.tenants[0]!.venues[0]!.id;
const warehouse = demo.tenants[0]!.warehouses[0]!.id;
let pg: EmbeddedDatabase;
let pool: Pool;
beforeAll(async () => {
  pg = await openEmbedded(mkdtempSync(join(tmpdir(), 'vb-central-proj-')), 'serve');
  pool = createPool(pg.url, 2);
  await migrate(pool);
  await provision(pool, 'demo', demo, { demo: true });
});
afterAll(async () => {
  await pool.end();
  await pg.stop();
});

const text = (kind: string, body: unknown, t = tenant) =>
  envelopeText(
    { eventId: randomUUID(), tenant: t, aggregate: 'a', kind: kind as EnvelopeKind, boxTime: 'whenever' },
    JSON.stringify(body),
  );
let seq = 0;
const apply = (kind: string, body: unknown) =>
  projectEvent(pool, { tenantId: tenant, deviceId: 'dev', seq: ++seq }, parseEvent(text(kind, body), tenant));
const balance = async (item: string) =>
  (
    await pool.query(
      'SELECT qty_micro FROM stock_balances WHERE tenant_id = $1 AND warehouse_id = $2 AND item_id = $3',
      [tenant, warehouse, item],
    )
  ).rows[0]?.qty_micro;

test('a stock document books its ledger into balances once, however often it arrives', async () => {
  const body = {
    document: { id: 'doc-1', kind: 'PZ', warehouse, number: 'PZ/1', created: '2026-11-23T12:00:00Z' },
    ledger: [
      [warehouse, 1, 'flour', 'kg', 2_000_000],
      [warehouse, 2, 'flour', 'kg', 500_000],
    ],
  };
  await apply('stock.document', body);
  await apply('stock.document', body);
  expect(await balance('flour')).toBe(2_500_000);
  await expect(
    apply('stock.document', { ...body, document: { ...body.document, id: 'doc-2', warehouse: 'elsewhere' } }),
  ).rejects.toThrow(RuleBroken);
});

test('an order keeps the newest version by seq; every version is kept', async () => {
  const order = (version: number, status: string) => ({
    version,
    command: { correlationId: 'c', kind: 'k', userId: 'u', staff: true, confirmedAt: 'x' },
    detail: { contact: null, extra: null, rounds: 0, lineRounds: {} },
    order: { id: 'o-1', tenant, status, created: '2026-11-23T12:00:00Z', buckets: [{ venue }] },
  });
  await apply('order.changed', order(1, 'NEW'));
  await apply('order.changed', order(2, 'CONFIRMED'));
  const { rows } = await pool.query('SELECT version, status FROM orders WHERE tenant_id = $1 AND order_id = $2', [
    tenant,
    'o-1',
  ]);
  expect(rows).toEqual([{ version: 2, status: 'CONFIRMED' }]);
  expect(
    (await pool.query('SELECT count(*)::int AS n FROM order_versions WHERE order_id = $1', ['o-1'])).rows[0].n,
  ).toBe(2);
  await expect(
    apply('order.changed', { ...order(3, 'X'), order: { ...order(3, 'X').order, buckets: [{ venue: 'not-ours' }] } }),
  ).rejects.toThrow(/venue/);
});

test('sold out is set with its reason and cleared; warehouses are upserted', async () => {
  await apply('soldout.changed', { venue, menu: 'm', productId: 'p', locked: true, reason: 'out of dough' });
  expect((await pool.query('SELECT reason FROM sold_out WHERE product_id = $1', ['p'])).rows).toEqual([
    { reason: 'out of dough' },
  ]);
  await apply('soldout.changed', { venue, menu: 'm', productId: 'p', locked: false, reason: null });
  expect((await pool.query('SELECT 1 FROM sold_out WHERE product_id = $1', ['p'])).rowCount).toBe(0);
  await apply('warehouse.changed', { id: 'new-wh', name: 'Piwnica' });
  expect((await pool.query('SELECT name FROM warehouses WHERE warehouse_id = $1', ['new-wh'])).rows).toEqual([
    { name: 'Piwnica' },
  ]);
});

test('rules: another tenant, an unknown kind, a body failing its schema', () => {
  expect(() => parseEvent(text('order.changed', {}, 'other'), tenant)).toThrow(/tenant/);
  expect(() => parseEvent(text('nope', {}), tenant)).toThrow(/unknown kind nope/);
  expect(() => parseEvent(text('warehouse.changed', { id: 1 }), tenant)).toThrow(/body \/(id|name)/);
  expect(() => parseEvent('[]', tenant)).toThrow(RuleBroken);
});

test("an order's and a document's created are required: the box always sends them, the central lists by them", () => {
  const order = { id: 'o-2', tenant, status: 'NEW', buckets: [{ venue }] };
  const body = {
    version: 1,
    command: { correlationId: 'c', kind: 'new', userId: 'u', staff: false, confirmedAt: 'x' },
    order,
    detail: { contact: null, extra: null, rounds: 0, lineRounds: {} },
  };
  expect(() => parseEvent(text('order.changed', body), tenant)).toThrow(/body \/order\/created/);
  expect(
    parseEvent(text('order.changed', { ...body, order: { ...order, created: '2026-11-23T12:00:00Z' } }), tenant).kind,
  ).toBe('order.changed');
  const document = { id: 'doc-9', kind: 'PZ', warehouse, number: 'PZ/9' };
  expect(() => parseEvent(text('stock.document', { document, ledger: [] }), tenant)).toThrow(
    /body \/document\/created/,
  );
  expect(() =>
    parseEvent(
      text('order.changed', { ...body, order: { ...order, created: '2026-11-23T12:00:00Z' }, detail: {} }),
      tenant,
    ),
  ).toThrow(/body \/detail/);
});
