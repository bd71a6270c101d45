import { afterAll, beforeAll, expect, test } from 'vitest';
import { createPool } from '../src/central/db/pool.js';
import { createDeviceService } from '../src/central/modules/devices/service.js';
import { CENTRAL_DEMO, startTestCentral, type TestCentral } from './support/central.js';
import { type Answer, SimDevice } from './support/sim-device.js';

let central: TestCentral;
beforeAll(async () => {
  central = await startTestCentral();
});
afterAll(async () => {
  await central.stop();
});

/** Runs `fn` over `items`, `width` at a time. */
async function pool<T, R>(items: T[], width: number, fn: (t: T) => Promise<R>): Promise<R[]> {
  const out: R[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await fn(items[i]!);
      }
    }),
  );
  return out;
}

test('100 boxes posting at once get only 200, 409 or 429, and all drain by honouring Retry-After', async () => {
  const venues = CENTRAL_DEMO.venues;
  // A hundred `central enrol` processes would take most of this test's time: the codes come from the same
  // service call the CLI makes, on the running central's database.
  const db = createPool(central.databaseUrl, 2);
  const service = createDeviceService(db, Date.now);
  const codes = await pool(
    Array.from({ length: 100 }, (_, i) => i),
    2,
    (i) => service.createCode(CENTRAL_DEMO.tenant, venues[i % venues.length]!, 1),
  );
  await db.end();
  const devices = await pool(
    Array.from({ length: 100 }, (_, i) => i),
    10,
    async (i) => {
      const d = new SimDevice(central.url(''));
      const res = await d.enrol(codes[i]!);
      expect(res.status).toBe(201);
      for (let k = 0; k < 60; k++) d.order();
      return d;
    },
  );

  // Every box at once, each with two batches in flight (one too many): the second must be refused, not queued.
  const burst: Answer[] = (await Promise.all(devices.map((d) => Promise.all([d.send(1, 30), d.send(31, 60)])))).flat();
  const statuses = new Set(burst.map((a) => a.status));
  expect(
    [...statuses].every((s) => s === 200 || s === 409 || s === 429),
    [...statuses].join(','),
  ).toBe(true);
  expect(burst.filter((a) => a.status === 429).length).toBeGreaterThan(0);
  for (const a of burst.filter((x) => x.status === 429)) {
    expect(Number(a.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(Number(a.headers.get('retry-after'))).toBeLessThanOrEqual(5);
  }

  // Then each drains, one batch at a time, waiting Retry-After whenever refused.
  const drained = await Promise.all(devices.map((d) => d.drain(1, 30)));
  expect(drained.flat().every((a) => a.status === 200 || a.status === 409 || a.status === 429)).toBe(true);
  const list = await central.hq('/hq-api/api/devices');
  expect(list).toHaveLength(100);
  expect(list.every((x: { head: { seq: number }; lagEvents: number }) => x.head.seq === 60 && x.lagEvents === 0)).toBe(
    true,
  );
}, 58_000);
