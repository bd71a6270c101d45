import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { DEMO, startTestBox, type TestBox } from './support/box.js';
import { command, newOrder } from './support/orders.js';
import { type Frame, openSocket } from './support/socket.js';

// Real clients of the socket, written by nobody here: they keep the last seq they processed and drop any frame at
// or below it (a duplicate), as a reconnecting client must. README "The socket".
let box: TestBox;
beforeAll(async () => {
  box = await startTestBox();
});
afterAll(async () => {
  await box.stop();
});

const WS = '/ordering-api/ws';
const zurek = { venue: DEMO.openVenue, lines: [{ productId: 'zurek', quantity: 1 }] };

describe('seq is strictly increasing on the wire', () => {
  test('a client dropping frames at or below its last seq keeps exactly the events it missed', async () => {
    const t = await box.token();
    const first = await openSocket(box.wsUrl(WS), t.access_token);
    await first.next('HELLO');
    const c = await command(box, t.access_token, 'new', newOrder(DEMO.openVenue));
    const seen = await first.next('ORDER_CHANGE');
    first.close();
    await first.closed;
    // Missed while offline: two changes and a refused command.
    await command(box, t.access_token, `${c.orderId}/append`, zurek);
    await command(box, t.access_token, `${c.orderId}/append`, { venue: DEMO.openVenue, lines: [{ productId: 'nope', quantity: 1 }] });
    await command(box, t.access_token, `${c.orderId}/append`, zurek);
    await new Promise((r) => setTimeout(r, 200));

    const again = await openSocket(box.wsUrl(`${WS}?since=${seen.seq}`), t.access_token);
    const hello = await again.next('HELLO');
    expect(hello.seq).toBe(seen.seq);
    await again.next('ORDER_CHANGE');
    await again.next('NOTIFICATION');
    await again.next('ORDER_CHANGE');
    // And a live one after the replay.
    await command(box, t.access_token, `${c.orderId}/append`, zurek);
    await again.next('ORDER_CHANGE');
    // The client, frame by frame in wire order.
    let last = seen.seq;
    const kept: Frame[] = [];
    for (const frame of again.frames) {
      if (frame.type === 'HELLO' || frame.seq <= last) continue;
      last = frame.seq;
      kept.push(frame);
    }
    expect(kept.map((f) => f.type)).toEqual(['ORDER_CHANGE', 'NOTIFICATION', 'ORDER_CHANGE', 'ORDER_CHANGE']);
    expect(kept.map((f) => f.seq)).toEqual([1, 2, 3, 4].map((i) => seen.seq + i));
    const wire = again.frames.map((f) => f.seq);
    expect(wire).toEqual([...wire].sort((a, b) => a - b));
    expect(new Set(wire).size).toBe(wire.length);
    again.close();
  });

  test('the HELLO of a fresh socket names the stream end; the next event is the one after it', async () => {
    const t = await box.token();
    const a = await openSocket(box.wsUrl(WS), t.access_token);
    expect((await a.next('HELLO')).seq).toBe(0);
    const b = await openSocket(box.wsUrl(WS), t.access_token);
    expect((await b.next('HELLO')).seq).toBe(0);
    await command(box, t.access_token, 'new', newOrder(DEMO.openVenue));
    expect((await a.next('ORDER_CHANGE')).seq).toBe(1);
    expect((await b.next('ORDER_CHANGE')).seq).toBe(1);
    a.close();
    b.close();
    // Reconnecting from the HELLO's seq replays everything that came after it.
    const c = await openSocket(box.wsUrl(`${WS}?since=0`), t.access_token);
    expect(await c.next('HELLO')).toMatchObject({ seq: 0 });
    expect((await c.next('ORDER_CHANGE')).seq).toBe(1);
    c.close();
  });
});
