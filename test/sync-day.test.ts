import Database from 'better-sqlite3';
import { join } from 'node:path';
import { afterAll, expect, test } from 'vitest';
import { driveVenueDay } from '../scripts/lib/venue-day.mjs';
import { DEMO, startTestBox, type TestBox } from './support/box.js';
import { startTestCentral, type TestCentral } from './support/central.js';
import { type FaultProxy, startFaultProxy } from './support/fault-proxy.js';
import { drained, enrol, FAST_SYNC, hqOrders, syncStatus } from './support/sync.js';
import { staff, W1, W2, wpath } from './warehouse-client.js';

// A day offline: the central is down while a busy venue works through a day (3,000 orders with their
// lifecycle and about 300 stock documents, some 40,000 events); then the central comes back and everything
// drains: 0 lost, 0 doubled, in sequence order, and the central's stock per warehouse equals the box's.
let box: TestBox | undefined;
let central: TestCentral | undefined;
let proxy: FaultProxy | undefined;
afterAll(async () => {
  await box?.stop();
  await proxy?.close();
  await central?.stop();
});

function boxRows<T>(b: TestBox, sql: string): T[] {
  const db = new Database(join(b.dataDir, 'venue-box.db'), { readonly: true, fileMustExist: true });
  try {
    return db.prepare(sql).all() as T[];
  } finally {
    db.close();
  }
}

test('a day offline drains with nothing lost, nothing doubled, in order, and the same stock', async () => {
  central = await startTestCentral();
  proxy = await startFaultProxy(central.port);
  box = await startTestBox({ config: FAST_SYNC });
  await enrol(box, proxy.url, await central.enrolCode(DEMO.openVenue));
  const dataDir = central.dataDir;
  await central.stop();

  const day = await driveVenueDay(box.url(''), { orders: 3000, documents: 300, warehouses: [W1, W2] });
  const offline = await syncStatus(box);
  expect(offline.ackedSeq).toBe(0);
  expect(offline.backlog).toBe(offline.newestSeq);
  expect(offline.backlog).toBeGreaterThanOrEqual(day.commands + day.documents);
  expect(offline.backlog).toBeGreaterThan(35_000);
  expect(offline.lastError).toMatch(/central/);

  central = await startTestCentral({ dataDir });
  proxy.target(central.port); // the central's address stays; its process came back on another port
  const status = await drained(box, 240_000);
  expect(status).toMatchObject({ deadLetters: 0, lastError: null });

  // 0 lost, 0 doubled: every order once, at the version and status the box has.
  const mine = boxRows<{ id: string; version: number; status: string }>(box, 'SELECT id, version, status FROM orders');
  const theirs = await hqOrders(central, DEMO.openVenue);
  expect(theirs).toHaveLength(mine.length);
  const byId = new Map(theirs.map((o) => [o.id, o]));
  for (const o of mine) expect(byId.get(o.id), o.id).toMatchObject({ version: o.version, status: o.status });
  // In sequence order: each order's versions at the central follow the box's sequence, 1, 2, 3...
  for (const o of mine.slice(0, 50)) {
    const versions: { version: number; seq: number }[] = await central.hq(`/hq-api/api/orders/${o.id}/versions`);
    expect(versions.map((v) => v.version)).toEqual(versions.map((_, i) => i + 1));
    expect(versions.map((v) => v.seq)).toEqual([...versions.map((v) => v.seq)].sort((a, b) => a - b));
  }
  const device = (await central.hq('/hq-api/api/devices'))[0];
  expect(device).toMatchObject({ head: { seq: status.newestSeq }, lagEvents: 0, deadLetters: 0 });

  // The central's stock per warehouse equals the box's, item by item.
  const s = await staff(box);
  for (const w of [W1, W2]) {
    const hq: { items: { id: string; unit: string; qty: number }[] } = await central.hq(
      `/hq-api/api/stock?warehouseId=${w}`,
    );
    const items = boxRows<{ item_id: string }>(
      box,
      `SELECT item_id FROM stock_balances WHERE warehouse_id = '${w}'`,
    ).map((r) => r.item_id);
    expect(hq.items.map((i) => i.id).sort()).toEqual([...items].sort());
    const res = await box.post(wpath(w, '/stock'), s.token, { items }, s.headers);
    const atBox = (await res.json()) as { items: { id: string; unit: string; qty: number }[] };
    const theirsById = new Map(hq.items.map((i) => [i.id, i]));
    for (const i of atBox.items)
      expect(theirsById.get(i.id), `${w}/${i.id}`).toMatchObject({ unit: i.unit, qty: i.qty });
  }
}, 600_000);
