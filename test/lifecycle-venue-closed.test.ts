import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test } from 'vitest';
import demo from '../native-config/demo.json';
import { DEMO, startTestBox } from './support/box.js';
import { nextChange, nextCodes, orderCommand } from './support/lifecycle.js';
import { command, newOrder } from './support/orders.js';
import { openSocket } from './support/socket.js';

test('venueClosed at submit: the venue stopped taking the channel between basket and submit', async () => {
  const box = await startTestBox();
  const t = await box.token();
  const c = await command(box, t.access_token, 'new', newOrder(DEMO.openVenue, [{ productId: 'zurek', quantity: 1 }]));
  let ws = await openSocket(box.wsUrl('/ordering-api/ws'), t.access_token);
  await ws.next('HELLO');
  // The order may have been pushed before the socket opened; wait until it exists.
  for (
    let i = 0;
    i < 50 && (await box.get(`/ordering-api/api/order/${c.orderId}`, t.access_token)).status !== 200;
    i++
  ) {
    await new Promise((r) => setTimeout(r, 10));
  }
  ws.close();
  await box.stop();

  // The venue closes its take-away channel: re-provisioned at the next start.
  const closed = structuredClone(demo);
  closed.tenants[0]!.venues[0]!.channelConstraints.TAKE_AWAY.active = false;
  const file = join(box.dataDir, 'closed-take-away.json');
  writeFileSync(file, JSON.stringify(closed));
  const again = await startTestBox({ dataDir: box.dataDir, config: { provisioningFile: file } });
  try {
    ws = await openSocket(again.wsUrl('/ordering-api/ws'), t.access_token);
    await ws.next('HELLO');
    const s = await orderCommand(again, t.access_token, c.orderId, 'submit');
    expect(await nextCodes(ws, s)).toEqual([
      { code: 'venueClosed', message: expect.any(String), args: [DEMO.openVenue, 'TAKE_AWAY'] },
    ]);
    // Editing the basket still works; cancelling it too.
    await orderCommand(again, t.access_token, c.orderId, 'update', {
      venue: DEMO.openVenue,
      lines: [{ id: c.lines[0], quantity: 2 }],
    });
    expect((await nextChange(ws, c.orderId)).editTotal).toBe('36.00');
    await orderCommand(again, t.access_token, c.orderId, 'cancel');
    expect((await nextChange(ws, c.orderId)).status).toBe('CANCELLED');
    ws.close();
  } finally {
    await again.stop();
  }
});
