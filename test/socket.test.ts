import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { DEMO, startTestBox, type TestBox } from './support/box.js';
import { command, newOrder } from './support/orders.js';
import { openSocket } from './support/socket.js';

let box: TestBox;
beforeAll(async () => {
  box = await startTestBox();
});
afterAll(async () => {
  await box.stop();
});

const refusal = (url: string, token?: string) =>
  openSocket(url, token).then(
    () => {
      throw new Error('upgrade was accepted');
    },
    (err: { status?: number }) => err.status,
  );

describe('socket handshake', () => {
  test('HELLO comes first with the user id and the token expiry', async () => {
    const t = await box.token();
    const ws = await openSocket(box.wsUrl('/ordering-api/ws'), t.access_token);
    const hello = await ws.next('HELLO');
    expect(ws.frames[0]).toBe(hello);
    expect(hello.payload).toEqual({ userId: t.UUID, expiresAt: expect.stringMatching(/Z$/) });
    expect(Date.parse(hello.payload.expiresAt as string) - Date.now()).toBeGreaterThan(3500_000);
    ws.close();
  });

  test('the token may come in access_token for browsers', async () => {
    const t = await box.token();
    const ws = await openSocket(box.wsUrl(`/ordering-api/ws?access_token=${t.access_token}`));
    expect((await ws.next('HELLO')).payload.userId).toBe(t.UUID);
    ws.close();
  });

  test('access_token is taken by the socket only, never by HTTP calls (query strings end up in logs)', async () => {
    const t = await box.token();
    const res = await box.get(`/venue-api/api/nearest?lat=50&lng=20&access_token=${t.access_token}`);
    expect(res.status).toBe(401);
    expect(await res.json()).toMatchObject({ codes: [{ code: 'unauthorized' }] });
  });

  test('a missing, malformed or forged token is refused with 401 before the upgrade', async () => {
    const t = await box.token();
    const [h, p, s] = t.access_token.split('.');
    const claims = JSON.parse(Buffer.from(p!, 'base64url').toString()) as Record<string, unknown>;
    const forged = `${h}.${Buffer.from(JSON.stringify({ ...claims, UUID: '22222222-2222-4222-8222-222222222222' })).toString('base64url')}.${s}`;
    expect(await refusal(box.wsUrl('/ordering-api/ws'))).toBe(401);
    expect(await refusal(box.wsUrl('/ordering-api/ws'), 'not.a.jwt')).toBe(401);
    expect(await refusal(box.wsUrl('/ordering-api/ws'), forged)).toBe(401);
    expect(await refusal(box.wsUrl('/ordering-api/ws?since=-1'), t.access_token)).toBe(400);
    for (const since of ['', '1e3', '0x10', '1.5']) {
      expect(await refusal(box.wsUrl(`/ordering-api/ws?since=${since}`), t.access_token)).toBe(400);
    }
  });
});

describe('pushes', () => {
  test('every socket of the user gets the event, with increasing seq', async () => {
    const t = await box.token();
    const a = await openSocket(box.wsUrl('/ordering-api/ws'), t.access_token);
    const b = await openSocket(box.wsUrl('/ordering-api/ws'), t.access_token);
    const helloA = await a.next('HELLO');
    const helloB = await b.next('HELLO');
    // A HELLO takes no number of its own: both name the stream's position (docs/api.md "The socket").
    expect(helloB.seq).toBe(helloA.seq);
    const c = await command(box, t.access_token, 'new', newOrder(DEMO.openVenue));
    const [ea, eb] = await Promise.all([a.next('ORDER_CHANGE'), b.next('ORDER_CHANGE')]);
    expect(ea).toEqual(eb);
    expect(ea.payload.id).toBe(c.orderId);
    expect(ea.seq).toBeGreaterThan(helloB.seq);
    a.close();
    b.close();
  });

  test('a reconnect with ?since=N first replays the events it missed, in order', async () => {
    const t = await box.token();
    const first = await openSocket(box.wsUrl('/ordering-api/ws'), t.access_token);
    await first.next('HELLO');
    const c = await command(box, t.access_token, 'new', newOrder(DEMO.openVenue));
    const seen = await first.next('ORDER_CHANGE');
    first.close();
    await first.closed;
    // While offline: two appends and a rejected command.
    await command(box, t.access_token, `${c.orderId}/append`, {
      venue: DEMO.openVenue,
      lines: [{ productId: 'zurek', quantity: 1 }],
    });
    await command(box, t.access_token, `${c.orderId}/append`, {
      venue: DEMO.openVenue,
      lines: [{ productId: 'nope', quantity: 1 }],
    });
    await command(box, t.access_token, `${c.orderId}/append`, {
      venue: DEMO.openVenue,
      lines: [{ productId: 'rosol', quantity: 1 }],
    });
    await new Promise((r) => setTimeout(r, 100));
    const again = await openSocket(box.wsUrl(`/ordering-api/ws?since=${seen.seq}`), t.access_token);
    const hello = await again.next('HELLO');
    expect(again.frames[0]).toBe(hello);
    // The HELLO names where the replay starts; every replayed frame is numbered above it.
    expect(hello.seq).toBe(seen.seq);
    const replayed = [
      await again.next('ORDER_CHANGE'),
      await again.next('NOTIFICATION'),
      await again.next('ORDER_CHANGE'),
    ];
    expect(replayed.map((f) => f.seq)).toEqual([seen.seq + 1, seen.seq + 2, seen.seq + 3]);
    expect(again.frames.map((f) => f.type)).toEqual(['HELLO', 'ORDER_CHANGE', 'NOTIFICATION', 'ORDER_CHANGE']);
    const lines = (replayed[2]!.payload.buckets as { lines: unknown[] }[])[0]!.lines;
    expect(lines).toHaveLength(1 + 1);
    // Live events continue after the HELLO's number.
    await command(box, t.access_token, `${c.orderId}/append`, {
      venue: DEMO.openVenue,
      lines: [{ productId: 'woda', quantity: 1 }],
    });
    expect((await again.next('ORDER_CHANGE')).seq).toBeGreaterThan(hello.seq);
    again.close();
  });

  test('a client sending messages is closed with 1008', async () => {
    const t = await box.token();
    const ws = await openSocket(box.wsUrl('/ordering-api/ws'), t.access_token);
    await ws.next('HELLO');
    ws.ws.send('hello?');
    expect((await ws.closed).code).toBe(1008);
  });
});

describe('token expiry', () => {
  test('the socket is closed with 4001 "token expired" at the token exp', async () => {
    const shortBox = await startTestBox({ config: { auth: { accessTokenTtlSeconds: 2 } } });
    try {
      const t = await shortBox.token();
      expect(t.expires_in).toBe(2);
      const ws = await openSocket(shortBox.wsUrl('/ordering-api/ws'), t.access_token);
      await ws.next('HELLO');
      const started = Date.now();
      expect(await ws.closed).toEqual({ code: 4001, reason: 'token expired' });
      expect(Date.now() - started).toBeLessThan(3000);
      // Renewed with the refresh token, the client replays what it missed.
      expect(await refusal(shortBox.wsUrl('/ordering-api/ws'), t.access_token)).toBe(401);
    } finally {
      await shortBox.stop();
    }
  });
});

describe('text outside ASCII', () => {
  // "Kraków, café": every character fits in one byte, which V8 stores as a one-byte string; uWS writes such a string
  // as Latin-1 (docs/architecture.md "Runtime and native addons"), so the box hands it UTF-8 bytes instead.
  const NOTE = 'Kraków, café, crème brûlée';
  const utf8 = new TextDecoder('utf-8', { fatal: true });

  test('arrives as UTF-8 in an HTTP reply, a live push and a replay', async () => {
    const t = await box.token();
    const live = await openSocket(box.wsUrl('/ordering-api/ws'), t.access_token);
    const hello = await live.next('HELLO');
    const c = await command(box, t.access_token, 'new', newOrder(DEMO.openVenue, [{ productId: 'woda', quantity: 1 }]));
    await command(box, t.access_token, `${c.orderId}/append`, {
      venue: DEMO.openVenue,
      lines: [{ productId: 'woda', quantity: 1, extra: { note: NOTE } }],
    });

    const res = await box.get(`/ordering-api/api/order/${c.orderId}`, t.access_token);
    expect(res.status).toBe(200);
    const text = utf8.decode(await res.arrayBuffer()); // throws on Latin-1 bytes
    expect(text).toContain(NOTE);

    const noted = (frame: { payload: unknown }) => JSON.stringify(frame.payload).includes(NOTE);
    await live.next('ORDER_CHANGE');
    expect(noted(await live.next('ORDER_CHANGE'))).toBe(true);
    const replay = await openSocket(box.wsUrl(`/ordering-api/ws?since=${hello.seq}`), t.access_token);
    await replay.next('HELLO');
    await replay.next('ORDER_CHANGE');
    expect(noted(await replay.next('ORDER_CHANGE'))).toBe(true);
    live.close();
    replay.close();
  });
});
