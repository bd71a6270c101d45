import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { DEMO, startTestBox, type TestBox } from './support/box.js';
import { command, newOrder } from './support/orders.js';
import { type Frame, openSocket, type TestSocket } from './support/socket.js';

const VENUE = DEMO.openVenue;
const WS = '/ordering-api/ws';
const KiB = 1024;
const MiB = 1024 * 1024;
const rssMb = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;
const lines = (n: number) => Array.from({ length: n }, () => ({ productId: 'zurek', quantity: 1 }));
const staffToken = async (box: TestBox) => (await box.token('kuchnia', 'kuchnia-demo-1')).access_token;
const refusal = (url: string, token: string) =>
  openSocket(url, token).then(
    (ws) => {
      ws.close();
      throw new Error('upgrade was accepted');
    },
    (err: { status?: number }) => err.status,
  );

describe('a socket that stops reading', () => {
  const PAUSED = 200;
  // The box idles at ~75-130 MB; the buffers allowed here (200 x 256 KiB live, as much again closing) are
  // ~100 MB, and malloc keeps some more. Without the limits each paused socket could hold 4 MiB.
  const RSS_CEILING_MB = 400;
  let box: TestBox;
  beforeAll(async () => {
    box = await startTestBox({
      // 200 sockets at their 256 KiB cap fit in the budget for closing sockets, so every one gets its close frame.
      // The reader's window is several of these tests' ~85 KB frames wide, so only the paused sockets fall behind.
      config: {
        sockets: {
          maxBufferedBytes: 64 * MiB,
          maxBackpressureBytes: 256 * KiB,
          maxUnacknowledgedBytes: MiB,
          maxPerUser: 1000,
          maxPerToken: 1000,
        },
      },
    });
  });
  afterAll(async () => {
    await box.stop();
  });

  test('is closed with 4008 while orders flow; memory stays bounded; a reading socket gets every ORDER_CHANGE', async () => {
    const staff = await staffToken(box);
    const paused: TestSocket[] = [];
    for (let i = 0; i < PAUSED; i += 50) {
      paused.push(
        ...(await Promise.all(Array.from({ length: 50 }, () => openSocket(box.wsUrl(`${WS}?venue=${VENUE}`), staff)))),
      );
    }
    await Promise.all(paused.map((s) => s.next('HELLO')));
    // The socket's underlying TCP stream stops being read: the box's send buffers fill up.
    for (const s of paused) (s.ws as unknown as { _socket: { pause(): void } })._socket.pause();
    const reader = await openSocket(box.wsUrl(`${WS}?venue=${VENUE}`), staff);
    const hello = await reader.next('HELLO');

    const tooSlow = () => box.logs.filter((l) => l.includes('socket too slow')).length;
    let commands = 0;
    let peakMb = 0;
    const deadline = Date.now() + 60_000;
    while (tooSlow() < PAUSED && Date.now() < deadline) {
      // Big orders (200 lines, tens of KB a frame) fill the paused sockets' kernel buffers quickly.
      await Promise.all(Array.from({ length: 4 }, () => command(box, staff, 'new', newOrder(VENUE, lines(200)))));
      commands += 4;
      peakMb = Math.max(peakMb, rssMb(box.proc.pid!));
    }
    expect(tooSlow()).toBe(PAUSED);
    expect(peakMb).toBeLessThan(RSS_CEILING_MB);

    // Every command's ORDER_CHANGE reached the reading socket, in order, none missing.
    const changes: Frame[] = [];
    for (let i = 0; i < commands; i++) changes.push(await reader.next('ORDER_CHANGE', 10_000));
    expect(changes.map((f) => f.seq)).toEqual(changes.map((_, i) => hello.seq + 1 + i));
    expect(reader.ws.readyState).toBe(reader.ws.OPEN);

    // Reading again, the paused sockets find the close code behind what was buffered for them.
    for (const s of paused) (s.ws as unknown as { _socket: { resume(): void } })._socket.resume();
    const codes = await Promise.all(paused.map((s) => s.closed));
    expect(new Set(codes.map((c) => `${c.code} ${c.reason}`))).toEqual(
      new Set(['4008 too slow: reconnect with ?since=']),
    );
    reader.close();
    console.log(
      `socket-limits: ${commands} commands, ${PAUSED} paused sockets closed, box peak RSS ${Math.round(peakMb)} MB`,
    );
  }, 120_000);
});

describe('limits on replay, sockets per user and token, frame size', () => {
  let box: TestBox;
  beforeAll(async () => {
    box = await startTestBox({
      config: { sockets: { maxReplayBytes: 64 * KiB, maxFrameBytes: 16 * KiB, maxPerUser: 4, maxPerToken: 3 } },
    });
  });
  afterAll(async () => {
    await box.stop();
  });

  test('a replay past maxReplayBytes gets the HELLO, then 4009; one within it is replayed whole', async () => {
    const t = await box.token();
    const first = await openSocket(box.wsUrl(WS), t.access_token);
    const hello = await first.next('HELLO');
    first.close();
    // Frames of ~4 KB: ten fit in 64 KiB, twenty do not.
    for (let i = 0; i < 10; i++) await command(box, t.access_token, 'new', newOrder(VENUE, lines(8)));
    const last = await openSocket(box.wsUrl(`${WS}?since=${hello.seq}`), t.access_token);
    const replayed: Frame[] = [];
    for (let i = 0; i < 10; i++) replayed.push(await last.next('ORDER_CHANGE'));
    expect(replayed.map((f) => f.seq)).toEqual(replayed.map((_, i) => hello.seq + 1 + i));
    expect(JSON.stringify(replayed).length).toBeGreaterThan(32 * KiB);
    const lastSeq = replayed.at(-1)!.seq;
    last.close();
    for (let i = 0; i < 10; i++) await command(box, t.access_token, 'new', newOrder(VENUE, lines(8)));

    const tooLong = await openSocket(box.wsUrl(`${WS}?since=${hello.seq}`), t.access_token);
    const closed = await tooLong.closed;
    expect(closed).toEqual({
      code: 4009,
      reason: 'replay too large: fetch orders by id, reconnect with a newer since',
    });
    expect(tooLong.frames.map((f) => f.type)).toEqual(['HELLO']);
    // From a later point the replay fits: everything after lastSeq, in order.
    const later = await openSocket(box.wsUrl(`${WS}?since=${lastSeq}`), t.access_token);
    await later.next('HELLO');
    const rest: number[] = [];
    for (let i = 0; i < 10; i++) rest.push((await later.next('ORDER_CHANGE')).seq);
    expect(rest[0]).toBe(lastSeq + 1); // a HELLO takes no number: the stream is gapless
    later.close();
  });

  test('sockets per token and per user are limited: one more is refused with 429', async () => {
    const staff1 = await staffToken(box);
    const staff2 = await staffToken(box);
    const open = [];
    for (let i = 0; i < 3; i++) open.push(await openSocket(box.wsUrl(`${WS}?venue=${VENUE}`), staff1));
    expect(await refusal(box.wsUrl(WS), staff1)).toBe(429);
    // A venue socket counts for the staff user who opened it, whichever token.
    open.push(await openSocket(box.wsUrl(WS), staff2));
    expect(await refusal(box.wsUrl(`${WS}?venue=${VENUE}`), staff2)).toBe(429);
    // A closed socket frees its place.
    open.shift()!.close();
    await new Promise((r) => setTimeout(r, 100));
    open.push(await openSocket(box.wsUrl(`${WS}?venue=${VENUE}`), staff2));
    for (const s of open) s.close();
  });

  test('a frame over maxFrameBytes is sent as ORDER_TOO_LARGE {orderId}, live and in the replay', async () => {
    const t = await box.token();
    const ws = await openSocket(box.wsUrl(WS), t.access_token);
    const hello = await ws.next('HELLO');
    const small = await command(box, t.access_token, 'new', newOrder(VENUE, lines(1)));
    expect((await ws.next('ORDER_CHANGE')).payload.id).toBe(small.orderId);
    const big = await command(box, t.access_token, 'new', newOrder(VENUE, lines(150)));
    const notice = await ws.next('ORDER_TOO_LARGE');
    expect(notice).toEqual({ type: 'ORDER_TOO_LARGE', seq: hello.seq + 2, payload: { orderId: big.orderId } });
    ws.close();
    // The order itself is fetched by id.
    const res = await box.get(`/ordering-api/api/order/${big.orderId}`, t.access_token);
    expect(res.status).toBe(200);
    expect(JSON.stringify(await res.json()).length).toBeGreaterThan(16 * KiB);
    const again = await openSocket(box.wsUrl(`${WS}?since=${hello.seq}`), t.access_token);
    await again.next('HELLO');
    expect((await again.next('ORDER_CHANGE')).payload.id).toBe(small.orderId);
    expect(await again.next('ORDER_TOO_LARGE')).toEqual(notice);
    again.close();
  });
});

// The kernel takes megabytes for a connection before uWS's send buffer fills; the reader's pongs tell the box
// what it has read instead (src/ws/ack-window.ts). Only that window can close a socket here.
describe('a reader is measured by its pongs', () => {
  // Several frames wide (a 200-line order's frame is ~85 KB), so a reader that keeps up but whose pong is a few
  // frames late on a busy machine is not closed.
  const WINDOW = 512 * KiB;
  let box: TestBox;
  beforeAll(async () => {
    box = await startTestBox({
      config: {
        sockets: {
          maxUnacknowledgedBytes: WINDOW,
          maxBackpressureBytes: 64 * MiB,
          maxBufferedBytes: 512 * MiB,
          maxReplayBytes: 64 * MiB,
        },
      },
    });
  });
  afterAll(async () => {
    await box.stop();
  });

  test('a paused reader is closed with 4008 once it is a window behind, long before the kernel buffers fill', async () => {
    const staff = await staffToken(box);
    const paused = await openSocket(box.wsUrl(`${WS}?venue=${VENUE}`), staff);
    await paused.next('HELLO');
    (paused.ws as unknown as { _socket: { pause(): void } })._socket.pause();
    const reader = await openSocket(box.wsUrl(`${WS}?venue=${VENUE}`), staff);
    const hello = await reader.next('HELLO');

    const closes = () => box.logs.filter((l) => l.includes('socket too slow'));
    let commands = 0;
    // 30 frames of ~85 KB are far more than the window, and less than the kernel holds for a loopback connection
    // (MiBs: tcp_wmem and the peer's window), so without the window nothing would be closed.
    while (closes().length === 0 && commands < 30) {
      await command(box, staff, 'new', newOrder(VENUE, lines(200)));
      commands++;
    }
    expect(closes(), closes().join('\n')).toHaveLength(1);
    const closed = JSON.parse(closes()[0]!) as { why: string; unacknowledged: number; userId: string };
    expect(closed.why).toBe('maxUnacknowledgedBytes');
    // Then a few windows more, for the replay below.
    while (commands < 30) {
      await command(box, staff, 'new', newOrder(VENUE, lines(200)));
      commands++;
    }

    // The reader that answers pings got every frame and is still open.
    const changes: Frame[] = [];
    for (let i = 0; i < commands; i++) changes.push(await reader.next('ORDER_CHANGE', 10_000));
    expect(changes.map((f) => f.seq)).toEqual(changes.map((_, i) => hello.seq + 1 + i));
    expect(reader.ws.readyState).toBe(reader.ws.OPEN);
    // Closed at the first frame past the window: at most the window, the frame that took it past, and this one.
    const frameBytes = Math.max(...changes.map((f) => JSON.stringify(f).length));
    expect(closed.unacknowledged).toBeGreaterThan(WINDOW);
    expect(closed.unacknowledged).toBeLessThanOrEqual(WINDOW + 2 * frameBytes);

    // A replay many windows long goes out window by window, each after the reader's pong, and completes.
    const again = await openSocket(box.wsUrl(`${WS}?venue=${VENUE}&since=${hello.seq}`), staff);
    const replayed: Frame[] = [];
    for (let i = 0; i < commands; i++) replayed.push(await again.next('ORDER_CHANGE', 10_000));
    expect(replayed.map((f) => f.seq)).toEqual(changes.map((f) => f.seq));
    const replayBytes = replayed.reduce((n, f) => n + JSON.stringify(f).length, 0);
    expect(replayBytes).toBeGreaterThan(4 * WINDOW);
    expect(again.ws.readyState).toBe(again.ws.OPEN);
    for (const s of [paused, reader, again]) s.ws.terminate();
  }, 60_000);
});
