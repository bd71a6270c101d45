import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import WebSocket from 'ws';
import { DEMO, startTestBox, type TestBox } from './support/box.js';
import { command, newOrder } from './support/orders.js';
import { type Frame, openSocket } from './support/socket.js';

// Real clients of the socket, written by nobody here: they keep the last seq they processed and drop any frame at
// or below it (a duplicate), as a reconnecting client must. docs/api.md "The socket".
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
    await command(box, t.access_token, `${c.orderId}/append`, {
      venue: DEMO.openVenue,
      lines: [{ productId: 'nope', quantity: 1 }],
    });
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

describe('subprotocols and pings', () => {
  test('an offered subprotocol is not echoed: the box speaks none (RFC 6455 4.2.2)', async () => {
    const t = await box.token();
    const ws = new WebSocket(box.wsUrl(WS), ['chat', 'mqtt'], {
      headers: { authorization: `Bearer ${t.access_token}` },
    });
    const outcome = await new Promise<string>((resolve) => {
      ws.once('upgrade', (res) => resolve(`protocol header: ${String(res.headers['sec-websocket-protocol'])}`));
      ws.once('error', (err) => resolve(`error: ${err.message}`));
    });
    // `ws` fails the handshake itself ("Server sent no subprotocol") when a client asked for one and got none;
    // what matters here is what the box answered.
    expect(outcome).toBe('protocol header: undefined');
    ws.terminate();
  });

  test('a client without any subprotocol still connects', async () => {
    const t = await box.token();
    const ws = await openSocket(box.wsUrl(WS), t.access_token);
    expect((await ws.next('HELLO')).payload.userId).toBe(t.UUID);
    ws.close();
  });
});

describe('pings', () => {
  // `ws` answers pings by itself unless told not to (autoPong: false): a client whose network went away.
  test('a client that stops answering pings is dropped after sockets.idleTimeoutSeconds; one that answers stays', async () => {
    const quick = await startTestBox({ config: { sockets: { idleTimeoutSeconds: 8 } } });
    try {
      const t = await quick.token();
      const open = (autoPong: boolean) =>
        new Promise<{ ws: WebSocket; pings: number[]; closed: Promise<number> }>((resolve, reject) => {
          const ws = new WebSocket(quick.wsUrl(WS), {
            autoPong,
            headers: { authorization: `Bearer ${t.access_token}` },
          });
          const pings: number[] = [];
          ws.on('ping', () => pings.push(Date.now()));
          const closed = new Promise<number>((r) => ws.on('close', () => r(Date.now())));
          ws.once('open', () => resolve({ ws, pings, closed }));
          ws.once('error', reject);
        });
      const started = Date.now();
      const [silent, answering] = await Promise.all([open(false), open(true)]);
      const droppedAt = await silent.closed;
      expect(silent.pings.length).toBeGreaterThan(0);
      expect(droppedAt - started).toBeGreaterThan(4000);
      expect(droppedAt - started).toBeLessThan(20_000);
      // The answering client outlives the silent one by a full timeout.
      await new Promise((r) => setTimeout(r, 9000));
      expect(answering.ws.readyState).toBe(WebSocket.OPEN);
      expect(answering.pings.length).toBeGreaterThan(1);
      answering.ws.close();
    } finally {
      await quick.stop();
    }
  }, 45_000);
});
