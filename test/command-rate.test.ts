import { afterAll, beforeAll, expect, test } from 'vitest';
import { DEMO, startTestBox, type TestBox } from './support/box.js';
import { newOrder } from './support/orders.js';
import { waitFor } from './support/sync.js';

// A customer's order commands are rate-limited (docs/orders.md "Order limits"); staff devices are not.
let box: TestBox;
beforeAll(async () => {
  box = await startTestBox({ config: { ordering: { customerCommandRate: { burst: 5, refillSeconds: 60 } } } });
});
afterAll(async () => {
  await box?.stop();
});

const order = () => newOrder(DEMO.openVenue, [{ productId: 'zurek', quantity: 1 }]);

test('past its burst a customer gets 429 tooManyRequests with Retry-After and nothing is queued; others go on', async () => {
  const staff = (await box.token('kelner', 'kelner-demo-1')).access_token;
  // The venue's orders are counted from here: another test of this file may have made some already.
  const count = async () =>
    (
      (await (await box.get(`/ordering-api/api/orders?venue=${DEMO.openVenue}&limit=200`, staff)).json()) as {
        items: unknown[];
      }
    ).items.length;
  const before = await count();
  const customer = (await box.token()).access_token;
  for (let i = 0; i < 5; i++)
    expect((await box.post('/ordering-api/api/order/new', customer, order())).status).toBe(200);
  const refused = await box.post('/ordering-api/api/order/new', customer, order());
  expect(refused.status).toBe(429);
  expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
  expect(await refused.json()).toMatchObject({
    codes: [{ code: 'tooManyRequests', args: ['ordering.customerCommandRate'] }],
  });

  // Another customer has a bucket of its own; staff are not limited.
  const other = (await box.token()).access_token;
  expect((await box.post('/ordering-api/api/order/new', other, order())).status).toBe(200);
  for (let i = 0; i < 12; i++) expect((await box.post('/ordering-api/api/order/new', staff, order())).status).toBe(200);
  // The refused command made no order: once every confirmed one is applied (just after its 200), the staff list
  // holds exactly the confirmed orders.
  const applied = await waitFor('every confirmed order applied', async () =>
    (await count()) - before >= 18 ? (await count()) - before : undefined,
  );
  await new Promise((r) => setTimeout(r, 200));
  expect(applied).toBe(5 + 1 + 12);
  expect((await count()) - before).toBe(18);
});

test('a command that writes a large order costs one more per 4 KiB of it past 8 KiB, taken once it is applied', async () => {
  const customer = (await box.token()).access_token;
  // An 80-line order is about 35 KB of Order JSON: its `new` costs 1 + 6, more than the burst of 5.
  const lines = Array.from({ length: 80 }, () => ({ productId: 'zurek', quantity: 1 }));
  const first = await box.post('/ordering-api/api/order/new', customer, newOrder(DEMO.openVenue, lines));
  expect(first.status).toBe(200);
  const { orderId } = (await first.json()) as { orderId: string };
  const size = await waitFor('the order applied', async () => {
    const res = await box.get(`/ordering-api/api/order/${orderId}`, customer);
    return res.status === 200 ? (await res.text()).length : undefined;
  });
  expect(size).toBeGreaterThan(8192 + 5 * 4096);
  const refused = await box.post('/ordering-api/api/order/new', customer, order());
  expect(refused.status).toBe(429);
  // The debt is paid back at the refill rate: Retry-After covers it (more than one refill of 60 s).
  expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(60);
});
