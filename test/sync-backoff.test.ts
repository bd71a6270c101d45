import { afterAll, expect, test } from 'vitest';
import { DEMO, startTestBox, type TestBox } from './support/box.js';
import { startTestCentral, type TestCentral } from './support/central.js';
import { type FaultProxy, startFaultProxy } from './support/fault-proxy.js';
import { command, newOrder } from './support/orders.js';
import { drained, enrol, waitFor } from './support/sync.js';
import { staff } from './warehouse-client.js';

let box: TestBox | undefined;
let central: TestCentral | undefined;
let proxy: FaultProxy | undefined;
afterAll(async () => {
  await box?.stop();
  await proxy?.close();
  await central?.stop();
});

test('during an outage new orders do not cut the backoff short: attempts thin out, not one per order', async () => {
  central = await startTestCentral();
  proxy = await startFaultProxy(central.port);
  box = await startTestBox({ config: { sync: { flushDelayMs: 20, retryMinMs: 500, retryMaxMs: 4000, heartbeatSeconds: 1 } } });
  await enrol(box, proxy.url, await central.enrolCode(DEMO.openVenue));
  await waitFor('the first hello', () => (proxy!.seen.get('/sync-api/api/hello 200') ?? 0) > 0);
  proxy.set('down');
  const attempts = () => [...proxy!.seen].filter(([k]) => k.endsWith(' reset')).reduce((n, [, v]) => n + v, 0);
  const s = await staff(box);
  const started = Date.now();
  for (let i = 0; i < 60; i++) {
    await command(box, s.token, 'new', newOrder(DEMO.openVenue, [{ productId: 'zurek', quantity: 1 }]));
    await new Promise((r) => setTimeout(r, 100));
  }
  const seconds = (Date.now() - started) / 1000;
  // 60 orders in about 6 s: doubling delays from 0.5 s (full jitter) allow a handful of attempts, never 60.
  expect(attempts()).toBeGreaterThan(0);
  expect(attempts()).toBeLessThan(Math.max(12, seconds * 2));
  proxy.set('pass');
  expect((await drained(box, 30_000)).backlog).toBe(0);
}, 60_000);
