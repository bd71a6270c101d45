import { afterEach, expect, test } from 'vitest';
import { driveVenueDay } from '../scripts/lib/venue-day.mjs';
import { DEMO, startTestBox, type TestBox } from './support/box.js';
import { startTestCentral, type TestCentral } from './support/central.js';
import { type FaultProxy, startFaultProxy } from './support/fault-proxy.js';
import { drained, enrol, FAST_SYNC, hqOrders, outboxOf, syncStatus, waitFor } from './support/sync.js';
import { W1, W2 } from './warehouse-client.js';

// kill -9 of either side while a backlog drains: every event reaches the central exactly once.
let box: TestBox | undefined;
let central: TestCentral | undefined;
let proxy: FaultProxy | undefined;
afterEach(async () => {
  await box?.stop('SIGKILL');
  await proxy?.close();
  await central?.stop(); // SIGTERM: a killed central would leave its PostgreSQL running
  box = central = proxy = undefined;
});

/** A box with a backlog of about 1,000 events (the central unreachable meanwhile). */
async function backlog(): Promise<{ orderIds: Set<string>; newest: number }> {
  central = await startTestCentral();
  proxy = await startFaultProxy(central.port);
  box = await startTestBox({ config: FAST_SYNC });
  await enrol(box, proxy.url, await central.enrolCode(DEMO.openVenue));
  proxy.set('down');
  await driveVenueDay(box.url(''), { orders: 90, documents: 20, warehouses: [W1, W2] });
  const status = await syncStatus(box);
  expect(status.backlog).toBeGreaterThan(900);
  const orderIds = new Set(
    outboxOf(box)
      .filter((r) => r.kind === 'order.changed')
      .map((r) => r.aggregate_id),
  );
  return { orderIds, newest: status.newestSeq };
}

/** The central has every order once, its head is the box's newest event, and nothing was set aside. */
async function exactlyOnce(c: TestCentral, orderIds: Set<string>, newest: number): Promise<void> {
  const device = await waitFor(
    'the central to reach the box',
    async () => {
      const d = (await c.hq('/hq-api/api/devices'))[0];
      return d.head.seq === newest ? d : undefined;
    },
    90_000,
  );
  expect(device.deadLetters).toBe(0);
  const list = await hqOrders(c, DEMO.openVenue);
  expect(list).toHaveLength(orderIds.size);
  expect(new Set(list.map((o) => o.id))).toEqual(orderIds);
}

test("kill -9 of the box mid-drain: after the restart it goes on from the central's head, nothing doubled", async () => {
  const { orderIds, newest } = await backlog();
  proxy!.set('slow', { delayMs: 150 });
  await waitFor('a part of the backlog to drain', async () => {
    const d = (await central!.hq('/hq-api/api/devices'))[0];
    return d.head.seq > 0 && d.head.seq < newest;
  });
  const dataDir = box!.dataDir;
  await box!.stop('SIGKILL');
  proxy!.set('pass');
  box = await startTestBox({ dataDir, config: FAST_SYNC });
  await drained(box, 90_000);
  await exactlyOnce(central!, orderIds, newest);
}, 180_000);

test('kill -9 of the central mid-drain: after its restart the box resends, nothing lost or doubled', async () => {
  const { orderIds, newest } = await backlog();
  proxy!.set('slow', { delayMs: 150 }); // a drain slow enough to be caught in the middle
  await waitFor('a part of the backlog to drain', async () => {
    const d = (await central!.hq('/hq-api/api/devices'))[0];
    return d.head.seq > 0 && d.head.seq < newest;
  });
  const dataDir = central!.dataDir;
  await central!.stop('SIGKILL');
  central = await startTestCentral({ dataDir });
  proxy!.target(central.port);
  proxy!.set('pass');
  await drained(box!, 90_000);
  await exactlyOnce(central, orderIds, newest);
}, 180_000);
