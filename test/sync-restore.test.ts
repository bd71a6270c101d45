import { execFileSync } from 'node:child_process';
import { cpSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect, test } from 'vitest';
import { DEMO, startTestBox, type TestBox } from './support/box.js';
import { startTestCentral, type TestCentral } from './support/central.js';
import { type FaultProxy, startFaultProxy } from './support/fault-proxy.js';
import { command, newOrder } from './support/orders.js';
import { drained, enrol, FAST_SYNC, hqOrders, outboxOf, syncStatus, waitFor } from './support/sync.js';
import { staff, W1, wpath } from './warehouse-client.js';

// Restores (docs/sync.md "Sync to the central node"): either side comes back from an older copy of its data.
let box: TestBox | undefined;
let central: TestCentral | undefined;
let proxy: FaultProxy | undefined;
afterEach(async () => {
  await box?.stop();
  await proxy?.close();
  await central?.stop();
  box = central = proxy = undefined;
});

async function orders(b: TestBox, n: number, productId = 'zurek'): Promise<string[]> {
  const s = await staff(b);
  const ids: string[] = [];
  for (let i = 0; i < n; i++)
    ids.push((await command(b, s.token, 'new', newOrder(DEMO.openVenue, [{ productId, quantity: i + 1 }]))).orderId);
  return ids;
}

async function pz(b: TestBox, item: string, qty: number): Promise<void> {
  const s = await staff(b);
  const res = await b.post(wpath(W1, '/documents/pz'), s.token, { items: [{ id: item, unit: 'kg', qty }] }, s.headers);
  expect(res.status).toBe(201);
}

const once = (list: { id: string }[], ids: string[]) => {
  for (const id of ids)
    expect(
      list.filter((o) => o.id === id),
      id,
    ).toHaveLength(1);
};

test('a box restored from an old copy of its database gets back what it lost, and its new events follow in a new epoch', async () => {
  central = await startTestCentral();
  proxy = await startFaultProxy(central.port);
  box = await startTestBox({ config: FAST_SYNC });
  await enrol(box, proxy.url, await central.enrolCode(DEMO.openVenue));
  const early = await orders(box, 3);
  await pz(box, 'maka', 5);
  await drained(box);
  const dataDir = box.dataDir;
  await box.stop();
  const copy = `${dataDir}-copy.db`;
  cpSync(join(dataDir, 'venue-box.db'), copy); // a clean stop checkpoints: the file alone is the database

  box = await startTestBox({ dataDir, config: FAST_SYNC });
  const lost = await orders(box, 3, 'rosol');
  await pz(box, 'maka', 2.5);
  const lostStatus = await drained(box);
  await box.stop();
  // The card is swapped for the old copy.
  for (const f of ['venue-box.db', 'venue-box.db-wal', 'venue-box.db-shm']) rmSync(join(dataDir, f), { force: true });
  cpSync(copy, join(dataDir, 'venue-box.db'));

  // It takes orders before it reaches the central: their seqs are the ones the central holds already.
  proxy.set('down');
  box = await startTestBox({ dataDir, config: FAST_SYNC });
  const fresh = await orders(box, 2, 'sernik');
  expect((await syncStatus(box)).newestSeq).toBeLessThanOrEqual(lostStatus.newestSeq);
  proxy.set('pass');
  const status = await waitFor(
    'the restore and the drain',
    async () => {
      const s = await syncStatus(box!);
      return s.epoch === 2 && s.backlog === 0 ? s : undefined;
    },
    60_000,
  );
  expect(status).toMatchObject({ lastError: null, deadLetters: 0, newestSeq: lostStatus.newestSeq + 2 });

  // The central: every order once; its head is the box's newest event.
  once(await hqOrders(central, DEMO.openVenue), [...early, ...lost, ...fresh]);
  const device = (await central.hq('/hq-api/api/devices'))[0];
  expect(device.head).toMatchObject({ epoch: 2, seq: status.newestSeq });
  // The box got back the orders and the document it had lost.
  const s = await staff(box);
  for (const id of lost) expect((await box.get(`/ordering-api/api/order/${id}`, s.token)).status).toBe(200);
  const stock = (await (await box.post(wpath(W1, '/stock'), s.token, { items: ['maka'] }, s.headers)).json()) as {
    items: unknown[];
  };
  expect(stock.items[0]).toMatchObject({ qty: 7.5, unit: 'kg' });
  const hqStock = await central.hq(`/hq-api/api/stock?warehouseId=${W1}`);
  expect(hqStock.items.find((i: { id: string }) => i.id === 'maka')).toMatchObject({ qty: 7.5 });
  // The outbox: consecutive seqs, each event once; the fresh orders' events come last, after the central's.
  const rows = outboxOf(box);
  expect(rows.map((r) => r.seq)).toEqual(rows.map((_, i) => i + 1));
  expect(new Set(rows.map((r) => r.event_id)).size).toBe(rows.length);
  expect(rows.slice(-2).map((r) => r.aggregate_id)).toEqual(fresh);
}, 120_000);

test('a central restored from an older backup is sent again what it lost', async () => {
  central = await startTestCentral();
  proxy = await startFaultProxy(central.port);
  box = await startTestBox({ config: FAST_SYNC });
  await enrol(box, proxy.url, await central.enrolCode(DEMO.openVenue));
  const before = await orders(box, 3);
  await drained(box);
  const dataDir = central.dataDir;
  await central.stop();
  const backup = `${dataDir}-backup`;
  // A cold copy of the central's data directory (its PostgreSQL), owners kept as a backup tool keeps them.
  execFileSync('cp', ['-a', dataDir, backup]);

  central = await startTestCentral({ dataDir });
  proxy.target(central.port);
  const between = await orders(box, 3, 'rosol');
  await drained(box);
  await central.stop();
  rmSync(dataDir, { recursive: true, force: true });
  execFileSync('cp', ['-a', backup, dataDir]);

  central = await startTestCentral({ dataDir });
  proxy.target(central.port);
  const after = await orders(box, 1, 'sernik');
  const status = await syncStatus(box);
  await waitFor(
    'the central to catch up',
    async () => {
      const d = (await central!.hq('/hq-api/api/devices'))[0];
      return d.head.seq === status.newestSeq ? d : undefined;
    },
    60_000,
  );
  once(await hqOrders(central, DEMO.openVenue), [...before, ...between, ...after]);
  expect(box.logs.some((l) => l.includes('the central is behind this box'))).toBe(true);
}, 120_000);
