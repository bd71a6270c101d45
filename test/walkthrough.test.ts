import { afterAll, beforeAll, expect, test } from 'vitest';
import { DEMO, startTestBox, type TestBox } from './support/box.js';
import { openSocket } from './support/socket.js';

let box: TestBox;
beforeAll(async () => {
  box = await startTestBox();
});
afterAll(async () => {
  await box.stop();
});

test('token, nearest venues, menu, socket and a new order pushed as ORDER_CHANGE', async () => {
  const token = await box.token();
  expect(token).toMatchObject({ token_type: 'bearer', scope: 'read', expires_in: 3600, TENANT: DEMO.tenant });

  const venues = (await (await box.get('/venue-api/api/nearest?lat=50.06&lng=19.94', token.access_token)).json()) as {
    id: string;
    menu: string;
  }[];
  expect(venues.map((v) => v.id)).toEqual([DEMO.venues[0]!.id, DEMO.venues[1]!.id, DEMO.venues[2]!.id]);

  const menuRes = await box.get(
    `/menu-api/api/menu/${DEMO.menu}?channel=TAKE_AWAY&instance=${DEMO.openVenue}`,
    token.access_token,
  );
  expect(menuRes.status).toBe(200);

  const ws = await openSocket(box.wsUrl('/ordering-api/ws'), token.access_token);
  expect(await ws.next('HELLO')).toMatchObject({ seq: 0, payload: { userId: token.UUID } });

  const res = await box.post('/ordering-api/api/order/new', token.access_token, {
    orderType: 'TAKE_AWAY',
    buckets: [{ venue: DEMO.openVenue, lines: [{ productId: 'zurek', price: 1, quantity: 2, status: 'NEW' }] }],
  });
  expect(res.status).toBe(200);
  const confirmation = (await res.json()) as { correlationId: string; orderId: string; lines: string[] };
  const change = await ws.next('ORDER_CHANGE');
  expect(change.seq).toBe(1);
  expect(change.payload).toMatchObject({ id: confirmation.orderId, status: 'NEW', editTotal: '36.00', total: '0.00' });
  ws.close();
});
