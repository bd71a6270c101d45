import { request } from 'node:http';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { BatchHeader } from '../src/shared/sync-messages.js';
import { BATCH_MEDIA_TYPE, MAX_BATCH_EVENTS, MAX_REQUEST_BYTES, verifyDetached } from '../src/shared/sync-protocol.js';
import { CENTRAL_DEMO, startTestCentral, type TestCentral } from './support/central.js';
import { enrolledDevice, SimDevice } from './support/sim-device.js';

// What a hostile device or headquarters client sent, one describe each: every bad input a device or HQ can send
// is a 4xx or a dead letter, never a 500, and no device can make the central do unbounded work.

let central: TestCentral;
beforeAll(async () => {
  central = await startTestCentral();
});
afterAll(async () => {
  expect(await central.stop()).toBe(0);
});

const enrolled = (venue?: string): Promise<SimDevice> => enrolledDevice(central, venue);

const code = (a: { body: any }) => a.body?.codes?.[0]?.code;
const hqGet = async (path: string) => {
  const res = await fetch(central.url(path), { headers: { authorization: `Bearer ${await central.hqToken()}` } });
  return { status: res.status, body: (await res.json()) as any };
};
const cursor = (at: string, id = 'x') => Buffer.from(JSON.stringify([at, id])).toString('base64url');

describe('batch framing', () => {
  test('more than MAX_BATCH_EVENTS events, a 4 KiB header, an unknown header field: 400 invalidBatch', async () => {
    const d = await enrolled();
    for (let i = 0; i < MAX_BATCH_EVENTS + 1; i++) d.append('x.y', 'a', {});
    const started = Date.now();
    const tooMany = await d.send(1, MAX_BATCH_EVENTS + 1);
    expect(tooMany.status).toBe(400);
    expect(code(tooMany)).toBe('invalidBatch');
    // 4 million empty lines: refused before anything is split or hashed.
    const empties = Buffer.concat([d.batch(1, 1), Buffer.alloc(MAX_REQUEST_BYTES - 2000, '\n')]);
    expect((await d.post(empties)).status).toBe(400);
    expect(Date.now() - started).toBeLessThan(3000);
    const junk = await d.post(d.batch(1, 1, { header: { junk: 'j'.repeat(5000) } as Partial<BatchHeader> }));
    expect(junk).toMatchObject({ status: 400, body: { codes: [{ code: 'invalidBatch' }] } });
    expect(code(await d.post(d.batch(1, 1, { header: { junk: 1 } as Partial<BatchHeader> })))).toBe('invalidBatch');
    expect((await d.send(1, MAX_BATCH_EVENTS)).status).toBe(200);
  });

  test('header numbers out of their columns, schema 0: 400; epoch 2^31-1 still fits', async () => {
    const d = await enrolled();
    d.order();
    for (const header of [{ epoch: 2 ** 31 }, { epoch: Number.MAX_SAFE_INTEGER }, { schema: 0 }]) {
      const res = await d.post(d.batch(1, 1, { header }));
      expect(res.status, JSON.stringify(header)).toBe(400);
      expect(code(res)).toBe('invalidBatch');
    }
    d.epoch = 2 ** 31 - 1;
    expect((await d.send(1, 1)).status).toBe(200);
    expect((await d.hello()).body.head).toMatchObject({ epoch: 2 ** 31 - 1, seq: 1 });
  });

  test('a hello clock outside +-1e15 ms is a 400 invalidField', async () => {
    const d = await enrolled();
    for (const boxTimeMs of [1e300, -1e300, 9.3e18, 1e15 + 1]) {
      const res = await d.hello({ boxTimeMs });
      expect(res.status, String(boxTimeMs)).toBe(400);
      expect(res.body.codes[0]).toMatchObject({ code: 'invalidField', args: ['/boxTimeMs'] });
    }
    expect((await d.hello({ boxTimeMs: -1e15 })).status).toBe(200);
  });

  test('a raw NUL is a 400; a \\u0000 escape the database refuses is a dead letter, never a 500', async () => {
    const d = await enrolled();
    d.order();
    d.append('', '', null, { text: 'abc\u0000def' });
    const nul = await d.send(1, 2);
    expect(nul).toMatchObject({ status: 400, body: { codes: [{ code: 'invalidBatch' }] } });
    d.events.pop();
    const order = JSON.parse(d.order().envelope).body;
    d.events.pop();
    d.append('order.changed', order.order.id, { ...order, order: { ...order.order, note: 'a\u0000b' } }); // jsonb refuses \u0000
    d.append('order.changed', 'x', {
      ...order,
      order: { ...order.order, id: crypto.randomUUID(), status: 'NE\u0000W' },
    }); // text column
    d.append('kind\u0000with-nul', 'agg\u0000', {}); // the raw event's own columns
    d.order();
    const res = await d.send(1, 5);
    expect(res.status).toBe(200);
    expect(res.body.deadLetters.map((x: any) => x.seq)).toEqual([2, 3, 4]);
    const tail = await d.tail(0);
    expect(tail.body.events[3].envelope).toBe(d.events[3]!.envelope);
  });

  test('content type exactly application/x-ndjson (parameters allowed); invalid UTF-8 is a 400', async () => {
    const d = await enrolled();
    d.append('x.y', 'a', { note: 'caf\uFFFD' });
    const post = (body: Buffer, type: string) =>
      fetch(central.url('/sync-api/api/batches'), { method: 'POST', headers: { 'content-type': type }, body });
    expect((await post(d.batch(1, 1), `${BATCH_MEDIA_TYPE}FOO`)).status).toBe(415);
    expect((await post(d.batch(1, 1), `${BATCH_MEDIA_TYPE}+json`)).status).toBe(415);
    // U+FFFD as sent replaced by one invalid byte: the same text once decoded leniently, so the same chain.
    const bytes = d.batch(1, 1);
    const at = bytes.indexOf(Buffer.from('\uFFFD', 'utf8'));
    const invalid = Buffer.concat([bytes.subarray(0, at), Buffer.from([0xff]), bytes.subarray(at + 3)]);
    const bad = await post(invalid, BATCH_MEDIA_TYPE);
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as any).codes[0].code).toBe('invalidBatch');
    expect((await post(d.batch(1, 1), `${BATCH_MEDIA_TYPE}; charset=utf-8`)).status).toBe(200);
  });
});

describe('the tail: byte-bounded pages and the proof of the head', () => {
  test('a page stops once it passes MAX_REQUEST_BYTES, with at least one event', async () => {
    const d = await enrolled();
    const big = 3 * 1024 * 1024 - 1000;
    for (let i = 0; i < 3; i++) {
      d.append('big.blob', `b${i}`, { data: 'x'.repeat(big) });
      expect((await d.send(i + 1, i + 1)).status).toBe(200);
    }
    const first = await d.tail(0, 500);
    expect(first.status).toBe(200);
    expect(first.body.events.map((e: any) => e.seq)).toEqual([1, 2]);
    expect((await d.tail(2, 500)).body.events.map((e: any) => e.seq)).toEqual([3]);
  }, 30_000);

  test('carries the signed header of the batch that set the head; duplicates leave it right', async () => {
    const d = await enrolled();
    expect((await d.tail(0)).body).toMatchObject({ head: { seq: 0 }, events: [], proof: null });
    for (let i = 0; i < 5; i++) d.order();
    expect((await d.send(1, 3)).status).toBe(200);
    expect((await d.send(2, 5)).status).toBe(200);
    const check = async (seq: number) => {
      const { body } = await d.tail(0);
      expect(body.head).toMatchObject({ seq, hash: d.events[seq - 1]!.hash });
      const header = JSON.parse(body.proof.header);
      expect(header).toMatchObject({ deviceId: d.deviceId, lastSeq: seq, lastHash: body.head.hash });
      expect(
        verifyDetached(
          Buffer.from(body.proof.header, 'utf8'),
          Buffer.from(body.proof.signature, 'base64'),
          d.keys.publicKey,
        ),
      ).toBe(true);
    };
    await check(5);
    d.clockMs += 1000; // a resend has another sentAt, so other header bytes
    expect((await d.send(1, 3)).status).toBe(200);
    expect((await d.send(4, 5)).status).toBe(200);
    await check(5);
  });
});

describe('headquarters cursors and dates', () => {
  test('a forged cursor with an impossible date is a 400 invalidField after, on both lists', async () => {
    const wh = CENTRAL_DEMO.warehouses[0]!;
    for (const at of [
      '2024-02-30 00:00:00+00',
      '2023-02-29 00:00:00+00',
      '2024-13-01 00:00:00+00',
      '2024-01-01 24:00:00+00',
      '2024-01-01 00:00:00+99',
      '0000-01-01 00:00:00+00',
      '10000-01-01 00:00:00+00',
      '2024-01-01 00:00:00+00 BC',
    ]) {
      for (const path of ['/hq-api/api/orders?after=', `/hq-api/api/stock-documents?warehouseId=${wh}&after=`]) {
        const res = await hqGet(`${path}${cursor(at)}`);
        expect(res.status, `${path} ${at}`).toBe(400);
        expect(res.body.codes[0]).toMatchObject({ code: 'invalidField', args: ['after'] });
      }
    }
    expect((await hqGet(`/hq-api/api/orders?after=${cursor('2024-02-29 23:59:59.123456+05:30')}`)).status).toBe(200);
  });

  test('orders and documents dated outside years 2000-9999 are kept at their receive time, so every cursor handed out pages on', async () => {
    const d = await enrolled();
    d.order(undefined, 1, 'NEW', new Date(Date.UTC(10000, 0, 1)).toISOString());
    d.order(undefined, 1, 'NEW', '1999-12-31T23:59:59Z');
    d.order(undefined, 1, 'NEW', '9999-12-31T23:59:59Z');
    d.order(undefined, 1, 'NEW', '2000-01-01T00:00:00Z');
    const doc = d.stockDocument(CENTRAL_DEMO.warehouses[1]!, [['flour', 'kg', 1]]);
    const body = JSON.parse(doc.envelope).body;
    d.events.pop();
    d.append('stock.document', 'd', {
      ...body,
      document: { ...body.document, id: crypto.randomUUID(), created: '0900-01-01T00:00:00Z' },
    });
    const res = await d.send(1, 5);
    // A box's clock is data, never a reason to set an event aside (docs/sync.md "Clocks").
    expect(res.body.deadLetters).toEqual([]);
    let next: string | null = null;
    let seen = 0;
    do {
      const page: { status: number; body: any } = await hqGet(
        `/hq-api/api/orders?deviceId=${d.deviceId}&limit=1${next ? `&after=${next}` : ''}`,
      );
      expect(page.status).toBe(200);
      seen += page.body.items.length;
      next = page.body.next;
    } while (next);
    expect(seen).toBe(4);
    const docs = await hqGet(`/hq-api/api/stock-documents?warehouseId=${CENTRAL_DEMO.warehouses[1]!}&limit=1`);
    expect(docs.status).toBe(200);
    for (let page = docs.body; page.next; ) {
      const more = await hqGet(
        `/hq-api/api/stock-documents?warehouseId=${CENTRAL_DEMO.warehouses[1]!}&limit=1&after=${page.next}`,
      );
      expect(more.status).toBe(200);
      page = more.body;
    }
  });
});

describe('stock ranges', () => {
  test('a delta past MAX_QTY_MICRO or a balance past the safe range is a dead letter; the warehouse reads', async () => {
    const d = await enrolled();
    const wh = CENTRAL_DEMO.warehouses[2]!;
    const max = 999_999_999_999_999;
    d.stockDocument(wh, [['huge', 'kg', max + 1]]);
    d.stockDocument(wh, [['huge', 'kg', -(max + 1)]]);
    const lines = (n: number) => Array.from({ length: n }, () => ['huge', 'kg', max] as [string, string, number]);
    d.stockDocument(wh, lines(8));
    d.stockDocument(wh, lines(1)); // 9 x max: still inside +-Number.MAX_SAFE_INTEGER
    d.stockDocument(wh, lines(9)); // 18 x max: past it
    const res = await d.send(1, 5);
    expect(res.status).toBe(200);
    expect(res.body.deadLetters.map((x: any) => x.seq)).toEqual([1, 2, 5]);
    const stock = await hqGet(`/hq-api/api/stock?warehouseId=${wh}`);
    expect(stock.status).toBe(200);
    expect(stock.body.items.find((i: any) => i.id === 'huge')).toMatchObject({ qty: (9 * max) / 1e6 });
  });
});

describe('enrolment keys', () => {
  // libsodium's ge25519_has_small_order blocklist (before 0f767c7d), each also with bit 255 set.
  const smallOrder = [
    '0000000000000000000000000000000000000000000000000000000000000000',
    '0100000000000000000000000000000000000000000000000000000000000000',
    '26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05',
    'c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a',
    'ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f',
    'edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f',
    'eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f',
  ].flatMap((hex) => {
    const key = Buffer.from(hex, 'hex');
    const flipped = Buffer.from(key);
    flipped[31]! |= 0x80;
    return [key, flipped];
  });

  test('small-order and non-canonical public keys are a 400 invalidField /publicKey; the code stays usable', async () => {
    const code = await central.enrolCode(CENTRAL_DEMO.venues[0]!);
    const nonCanonical = Buffer.alloc(32, 0xff);
    nonCanonical[0] = 0xf0;
    nonCanonical[31] = 0x7f;
    for (const key of [...smallOrder, nonCanonical]) {
      const d = new SimDevice(central.url(''));
      (d.keys as { publicKey: Uint8Array }).publicKey = key;
      const res = await d.enrol(code);
      expect(res, key.toString('hex')).toMatchObject({
        status: 400,
        body: { codes: [{ code: 'invalidField', args: ['/publicKey'] }] },
      });
    }
    expect((await new SimDevice(central.url('')).enrol(code)).status).toBe(201);
  });
});

describe('enrolment codes', () => {
  /** An enrolment from a chosen loopback address: the limit is per client address. */
  const enrolFrom = (localAddress: string, code: string) =>
    new Promise<{ status: number; retryAfter?: string; codes: string[] }>((resolve, reject) => {
      const body = JSON.stringify({
        code,
        publicKey: Buffer.from(new SimDevice('').keys.publicKey).toString('base64'),
      });
      const url = new URL(central.url('/sync-api/api/enrol'));
      const req = request(
        {
          host: url.hostname,
          port: url.port,
          path: url.pathname,
          method: 'POST',
          localAddress,
          headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
        },
        (res) => {
          let text = '';
          res.setEncoding('utf8').on('data', (chunk: string) => {
            text += chunk;
          });
          res.on('end', () =>
            resolve({
              status: res.statusCode!,
              retryAfter: res.headers['retry-after'],
              codes: ((JSON.parse(text) as { codes?: { code: string }[] }).codes ?? []).map((c) => c.code),
            }),
          );
        },
      );
      req.on('error', reject);
      req.end(body);
    });

  test('past 10 wrong codes from one address: 429 with Retry-After, even for a right one; other addresses go on', async () => {
    for (let i = 0; i < 10; i++) expect((await enrolFrom('127.0.0.3', `WRONG-${i}`)).status).toBe(401);
    const good = await central.enrolCode(CENTRAL_DEMO.venues[0]!);
    const refused = await enrolFrom('127.0.0.3', good);
    expect(refused).toMatchObject({ status: 429, codes: ['tooManyRequests'] });
    expect(Number(refused.retryAfter)).toBeGreaterThanOrEqual(1);
    // The refused attempt did not spend the code: another address enrols with it.
    expect((await enrolFrom('127.0.0.4', good)).status).toBe(201);
  });
});

describe('order ownership', () => {
  test('an order another device of the tenant sent first is a dead letter; any venue of the tenant is accepted', async () => {
    const a = await enrolled(CENTRAL_DEMO.venues[0]!);
    const b = await enrolled(CENTRAL_DEMO.venues[1]!);
    const id = crypto.randomUUID();
    a.order(id, 1, 'NEW');
    a.order(id, 2, 'COMPLETED');
    expect((await a.send(1, 2)).body.deadLetters).toEqual([]);
    b.order(id, 1, 'NEW');
    b.order(undefined, 1, 'NEW', undefined, CENTRAL_DEMO.venues[2]!); // a venue of the tenant, not b's own
    const res = await b.send(1, 2);
    expect(res.body.deadLetters).toEqual([
      { seq: 1, eventId: expect.any(String), reason: `order belongs to device ${a.deviceId}` },
    ]);
    expect((await hqGet(`/hq-api/api/orders/${id}`)).body).toMatchObject({
      status: 'COMPLETED',
      version: 2,
      deviceId: a.deviceId,
    });
    const versions = (await hqGet(`/hq-api/api/orders/${id}/versions`)).body;
    expect(versions.map((v: any) => v.deviceId)).toEqual([a.deviceId, a.deviceId]);
  });
});

describe('admission', () => {
  test("unauthenticated batches naming a device never take that device's slot", async () => {
    const victim = await enrolled();
    const attacker = new SimDevice(central.url(''));
    Object.assign(attacker, { deviceId: victim.deviceId, tenant: victim.tenant, keyId: victim.keyId });
    attacker.order();
    const spoof = attacker.batch(1, 1);
    let stop = false;
    const spoofed: number[] = [];
    const flood = async () => {
      while (!stop) spoofed.push((await attacker.post(spoof)).status);
    };
    const floods = Array.from({ length: 4 }, flood);
    const refusals: string[] = [];
    for (let i = 0; i < 40; i++) {
      victim.order();
      const r = await victim.send(victim.lastSeq, victim.lastSeq);
      if (r.status !== 200) {
        refusals.push(`${r.status} ${r.body.message}`);
        victim.events.pop();
      }
    }
    stop = true;
    await Promise.all(floods);
    expect(spoofed.length).toBeGreaterThan(40);
    expect(spoofed.every((s) => s === 401 || s === 429)).toBe(true);
    expect(refusals.filter((m) => /this device/.test(m))).toEqual([]);
  }, 30_000);

  test('a request arriving while the central shuts down is a 503 with Retry-After', async () => {
    const own = await startTestCentral();
    // A kept-alive connection: the listening socket closes at SIGTERM, open connections are still answered.
    const socket = connect(own.port, '127.0.0.1');
    await new Promise((r) => socket.once('connect', r));
    let received = '';
    let closed = false;
    let wake = (): void => {};
    socket.on('data', (chunk) => {
      received += chunk.toString('latin1');
      wake();
    });
    socket.on('close', () => {
      closed = true;
      wake();
    });
    socket.on('error', () => undefined);
    const HEAD = /HTTP\/1\.1 [\s\S]*?\r\n\r\n/;
    /** The head of the next answer (an unsigned tail fetch: 401 while the central runs), '' once closed. */
    const ask = async (): Promise<string> => {
      received = '';
      socket.write('GET /sync-api/api/events HTTP/1.1\r\nHost: x\r\n\r\n');
      while (!closed && !HEAD.test(received)) await new Promise<void>((r) => (wake = r));
      return HEAD.exec(received)?.[0] ?? '';
    };
    expect(await ask()).toMatch(/^HTTP\/1\.1 401/);
    own.proc.kill('SIGTERM');
    let head = '';
    while (!closed && !/^HTTP\/1\.1 503/.test(head)) {
      head = await ask();
    }
    expect(head).toMatch(/^HTTP\/1\.1 503[\s\S]*\r\nretry-after: [5-9]\r\n/i);
    socket.destroy();
    expect(await own.stop()).toBe(0);
  });
});
