import Database from 'better-sqlite3';
import { join } from 'node:path';
import { afterEach, expect, test } from 'vitest';
import { DEMO, startTestBox, type TestBox } from './support/box.js';
import { startTestCentral, type TestCentral } from './support/central.js';
import { command, newOrder } from './support/orders.js';
import { drained, enrol, FAST_SYNC, outboxOf } from './support/sync.js';
import { staff, W1, wpath } from './warehouse-client.js';

let box: TestBox | undefined;
let central: TestCentral | undefined;
afterEach(async () => {
  await box?.stop();
  await central?.stop();
  box = central = undefined;
});

test('a box upgraded with history puts it into the outbox once, and the central then has it', async () => {
  box = await startTestBox({ config: FAST_SYNC });
  const s = await staff(box);
  const order = await command(box, s.token, 'new', newOrder(DEMO.openVenue, [{ productId: 'zurek', quantity: 2 }]));
  await command(box, s.token, `${order.orderId}/submit`, {});
  expect(
    (await box.post(wpath(W1, '/documents/pz'), s.token, { items: [{ id: 'jaja', unit: 'szt', qty: 30 }] }, s.headers))
      .status,
  ).toBe(201);
  const lock = await fetch(box.url(`/menu-api/api/menu/${DEMO.menu}/locks`), {
    method: 'PUT',
    headers: { authorization: `Bearer ${s.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ venue: DEMO.openVenue, productId: 'ges', locked: true }),
  });
  expect(lock.status).toBe(200);
  const { dataDir } = box;
  await box.stop();
  // As a database of the version before sync leaves the migration: an empty outbox, nothing backfilled.
  const db = new Database(join(dataDir, 'venue-box.db'));
  db.exec(`DELETE FROM sync_outbox; DELETE FROM sqlite_sequence WHERE name = 'sync_outbox';
    UPDATE sync_state SET backfilled = 0; UPDATE orders SET version = 0;`);
  db.close();

  box = await startTestBox({ dataDir, config: FAST_SYNC });
  expect(box.logs.filter((l) => l.includes('put into the outbox once'))[0]).toMatch(
    /"orders":1,"documents":1,"soldOut":1/,
  );
  const rows = outboxOf(box);
  expect(rows.map((r) => [r.seq, r.kind])).toEqual([
    [1, 'order.changed'],
    [2, 'warehouse.changed'],
    [3, 'stock.document'],
    [4, 'soldout.changed'],
  ]);

  central = await startTestCentral();
  await enrol(box, central.url(''), await central.enrolCode(DEMO.openVenue));
  const status = await drained(box);
  expect(status).toMatchObject({ deadLetters: 0, newestSeq: 4 });
  expect(await central.hq(`/hq-api/api/orders/${order.orderId}`)).toMatchObject({ status: 'ORDERED', version: 1 });
  const versions: { command: { kind: string } }[] = await central.hq(`/hq-api/api/orders/${order.orderId}/versions`);
  expect(versions.map((v) => v.command.kind)).toEqual(['backfill']);
  const stock = await central.hq(`/hq-api/api/stock?warehouseId=${W1}`);
  expect(stock.items.find((i: { id: string }) => i.id === 'jaja')).toMatchObject({ qty: 30, unit: 'szt' });

  // Once: a restart adds nothing.
  await box.stop();
  box = await startTestBox({ dataDir, config: FAST_SYNC });
  expect(box.logs.some((l) => l.includes('put into the outbox once'))).toBe(false);
  expect(outboxOf(box)).toHaveLength(4);
}, 60_000);
