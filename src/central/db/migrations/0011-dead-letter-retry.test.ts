import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import demo from '../../../../native-config/demo.json';
import { SimDevice } from '../../../../test/support/sim-device.js';
import { listDeadLetters, retryDeadLetters } from '../../modules/ingest/dead-letters.js';
import { provision } from '../../modules/tenants/provision.js';
import { type EmbeddedDatabase, openEmbedded } from '../embedded.js';
import { migrate } from '../migrate.js';
import { createPool, type Pool } from '../pool.js';

// Migration 11 on a central at schema 10 that holds what the issue left behind: a box whose clock said 1970 had
// its order and document dead-lettered by a central before docs/sync.md "Clocks". After the migration they wait,
// and a replay projects them once, on the central's clock (the offset measured at the time), the box's time kept.
const tenant = demo.tenants[0]!.id;
const venue = demo.tenants[0]!.venues[0]!.id;
const warehouse = demo.tenants[0]!.warehouses[0]!.id;
const BOX_MS = Date.parse('1970-01-01T08:00:05.000Z');
const REAL_MS = Date.parse('2026-11-27T07:59:05.000Z');
const RECEIVED = '2026-11-27T08:00:00.000Z';

let pg: EmbeddedDatabase;
let pool: Pool;
beforeAll(async () => {
  pg = await openEmbedded(mkdtempSync(join(tmpdir(), 'vb-central-m11-')), 'serve');
  pool = createPool(pg.url, 2);
  expect(await migrate(pool, 10)).toEqual({ from: 0, to: 10 });
  await provision(pool, 'demo', demo, { demo: true });
});
afterAll(async () => {
  await pool.end();
  await pg.stop();
});

test('1970 events dead-lettered before migration 11 wait after it, and replay once on the real day', async () => {
  const box = Object.assign(new SimDevice(''), { tenant, venue, deviceId: 'box-1970', clockMs: BOX_MS });
  const order = box.order();
  const doc = box.stockDocument(warehouse, [['flour', 'kg', 3_000_000]]);
  await pool.query(
    `INSERT INTO devices (tenant_id, device_id, venue_id, public_key, key_id, head_epoch, head_seq, head_hash, clock_offset_ms)
     VALUES ($1, 'box-1970', $2, '\\x00', 'k', 1, 2, $3, $4)`,
    [tenant, venue, doc.hash, BOX_MS - REAL_MS],
  );
  for (const e of [order, doc])
    await pool.query(
      `INSERT INTO sync_dead_letters (tenant_id, device_id, seq, event_id, reason, envelope, created_at)
       VALUES ($1, 'box-1970', $2, $3, 'order.created 1970-01-01T08:00:05.000Z is outside years 2000-9999', $4, $5)`,
      [tenant, e.seq, JSON.parse(e.envelope).eventId, e.envelope, RECEIVED],
    );

  expect(await migrate(pool)).toMatchObject({ from: 10 });
  expect((await listDeadLetters(pool, { device: 'box-1970' })).map((d) => [d.id, d.kind, d.retries])).toEqual([
    ['box-1970:1', 'order.changed', 0],
    ['box-1970:2', 'stock.document', 0],
  ]);

  expect(await retryDeadLetters(pool, { filter: { device: 'box-1970' } })).toEqual([
    { id: 'box-1970:1', outcome: 'replayed' },
    { id: 'box-1970:2', outcome: 'replayed' },
  ]);
  const orderId = JSON.parse(order.envelope).aggregate;
  const { rows } = await pool.query(
    `SELECT created_at, data->>'created' AS box_created FROM orders WHERE tenant_id = $1 AND order_id = $2`,
    [tenant, orderId],
  );
  expect(rows).toEqual([{ created_at: new Date(REAL_MS), box_created: '1970-01-01T08:00:05.000Z' }]);
  const flour = async () =>
    (
      await pool.query(
        `SELECT qty_micro FROM stock_balances WHERE tenant_id = $1 AND warehouse_id = $2 AND item_id = 'flour'`,
        [tenant, warehouse],
      )
    ).rows[0]?.qty_micro;
  expect(await flour()).toBe(3_000_000);

  // Again: nothing more is projected, and the rows stay as the record of the replay.
  expect(await retryDeadLetters(pool, { ids: [['box-1970', 1]] })).toEqual([
    { id: 'box-1970:1', outcome: 'alreadyReplayed' },
  ]);
  expect(await retryDeadLetters(pool, { filter: {} })).toEqual([]);
  expect(await flour()).toBe(3_000_000);
  expect(await listDeadLetters(pool, { device: 'box-1970' })).toEqual([]);
  const kept = await listDeadLetters(pool, { device: 'box-1970', resolved: true });
  expect(kept.map((d) => [d.retries, d.resolvedAt !== null])).toEqual([
    [1, true],
    [1, true],
  ]);
});
