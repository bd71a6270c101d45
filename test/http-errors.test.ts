import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { DEMO, startTestBox, type TestBox } from './support/box.js';
import { expectApiError } from './support/fixtures.js';
import { W1 } from './warehouse-client.js';

let box: TestBox;
let token: string;

beforeAll(async () => {
  box = await startTestBox();
  token = (await box.token()).access_token;
});
afterAll(async () => {
  await box?.stop();
});

const NEW = '/ordering-api/api/order/new';
const NEAREST = '/venue-api/api/nearest?lat=50&lng=20';
const validOrder = () => ({
  orderType: 'TAKE_AWAY',
  buckets: [{ venue: DEMO.openVenue, lines: [{ productId: 'zurek', price: 18, quantity: 2, status: 'NEW' }] }],
});
const post = (body: unknown, headers: Record<string, string> = {}) => box.post(NEW, token, body, headers);

/** The box is still up and serving after whatever the test threw at it. */
async function expectAlive(): Promise<void> {
  expect(box.proc.exitCode).toBeNull();
  expect(box.proc.signalCode).toBeNull();
  expect((await box.get('/venue-api/api/nearest?lat=50&lng=20', token)).status).toBe(200);
}

/** A raw HTTP/1.1 exchange, for what fetch cannot send (bad percent-encoding, lying content-length). */
function raw(path: string, init: { method?: string; headers?: Record<string, string>; body?: Buffer } = {}) {
  return new Promise<{ status: number; headers: Record<string, unknown>; body: string }>((resolve, reject) => {
    const req = httpRequest(
      { host: '127.0.0.1', port: box.port, path, method: init.method ?? 'GET', headers: init.headers },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
      },
    );
    req.on('error', reject);
    req.end(init.body);
  });
}

describe('unknown paths', () => {
  test.each([
    ['GET', '/nope'],
    // `/` serves the screens now (README "Screens"); with screens.enabled false it is this 404 again
    // (test/screens-http.test.ts). A file name next to them is still unknown.
    ['GET', '/index.html'],
    ['POST', '/venue-api/api/nearest/extra'],
    ['GET', '/ordering-api/api/order/new/x'],
  ])('%s %s is 404 notFound with the API error shape', async (method, path) => {
    const res = await fetch(box.url(path), { method, headers: { authorization: `Bearer ${token}` } });
    await expectApiError(res, 404, 'notFound');
  });

  // A known path with a method it does not take was 404 too; RFC 9110 15.5.6 makes it 405 with Allow.
  test.each([
    ['DELETE', '/auth-oauth2/oauth/token'],
    ['GET', '/auth-oauth2/oauth/token'],
  ])('%s %s is 405 methodNotAllowed with the API error shape and Allow', async (method, path) => {
    const res = await fetch(box.url(path), { method, headers: { authorization: `Bearer ${token}` } });
    expect(res.headers.get('allow')).toBe('POST, OPTIONS');
    await expectApiError(res, 405, 'methodNotAllowed');
  });

  test('an unknown path is 404 even without a token (no 401 that would reveal nothing exists)', async () => {
    await expectApiError(await box.get('/nope'), 404, 'notFound');
  });
});

describe('bodies of JSON commands', () => {
  test('a valid order is accepted (the baseline for the cases below)', async () => {
    expect((await post(validOrder())).status).toBe(200);
  });

  test.each([
    ['truncated JSON', '{"orderType": "TAKE_AWAY", "buckets": ['],
    ['a trailing comma', '{"orderType": "TAKE_AWAY",}'],
    ['single quotes', "{'orderType': 'TAKE_AWAY'}"],
    ['plain words', 'hello'],
    ['two JSON documents', '{} {}'],
  ])('malformed JSON (%s) is 400 invalidBody', async (_name, text) => {
    await expectApiError(await post(text), 400, 'invalidBody');
  });

  test('an empty body is 400 invalidBody', async () => {
    await expectApiError(await post(''), 400, 'invalidBody');
  });

  test.each([
    ['text/plain', 'text/plain'],
    ['form-urlencoded', 'application/x-www-form-urlencoded'],
    ['a JSON look-alike', 'application/jsonx'],
  ])('a %s body is 415 unsupportedMediaType', async (_name, type) => {
    await expectApiError(
      await post(JSON.stringify(validOrder()), { 'content-type': type }),
      415,
      'unsupportedMediaType',
    );
  });

  // A JSON Merge Patch (RFC 7396) or JSON Patch (RFC 6902) asks for patch semantics no route applies: it was taken
  // as plain JSON, as any +json type is; docs/api.md "Errors" promises 415 for a body not application/json.
  test.each([
    ['application/merge-patch+json'],
    ['application/merge-patch+json; charset=utf-8'],
    ['application/json-patch+json'],
  ])('a %s body is 415 unsupportedMediaType', async (type) => {
    await expectApiError(
      await post(JSON.stringify(validOrder()), { 'content-type': type }),
      415,
      'unsupportedMediaType',
    );
  });

  test('application/json with a charset, and +json types, are accepted', async () => {
    expect((await post(validOrder(), { 'content-type': 'application/json; charset=utf-8' })).status).toBe(200);
    expect((await post(validOrder(), { 'content-type': 'application/vnd.venue+json' })).status).toBe(200);
  });

  test('a 2 MiB body is 413 payloadTooLarge, and the box serves the next request', async () => {
    const big = JSON.stringify({ ...validOrder(), extra: { pad: 'x'.repeat(2 * 1024 * 1024) } });
    const res = await raw(NEW, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: Buffer.from(big),
    }).catch((err: unknown) => err as Error);
    // The box answers before reading the body and closes the connection; the answer must still arrive.
    expect(res).toMatchObject({ status: 413 });
    const r = res as Awaited<ReturnType<typeof raw>>;
    expect(r.headers['content-type']).toMatch(/^application\/json/);
    expect(JSON.parse(r.body)).toStrictEqual({
      message: expect.any(String),
      codes: [{ code: 'payloadTooLarge', message: expect.any(String), args: [] }],
    });
    await expectAlive();
  });

  test('a 2 MiB body through fetch is 413 too', async () => {
    const big = JSON.stringify({ ...validOrder(), extra: { pad: 'x'.repeat(2 * 1024 * 1024) } });
    await expectApiError(await post(big), 413, 'payloadTooLarge');
    await expectAlive();
  });

  test('a chunked 2 MiB body (no content-length) is 413, and the box serves the next request', async () => {
    const chunk = new TextEncoder().encode('x'.repeat(64 * 1024));
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent >= 32) controller.close();
        else {
          sent++;
          controller.enqueue(chunk);
        }
      },
    });
    const res = await fetch(box.url(NEW), {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: stream,
      duplex: 'half',
    } as RequestInit);
    await expectApiError(res, 413, 'payloadTooLarge');
    await expectAlive();
  });

  test('a body declared far too large is refused at once: 413, connection closed, box still serving', async () => {
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = connect(box.port, '127.0.0.1', () => {
        socket.write(
          `POST ${NEW} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n` +
            `authorization: Bearer ${token}\r\ncontent-length: ${100 * 1024 * 1024}\r\n\r\n{`,
        );
      });
      let text = '';
      socket.setEncoding('utf8');
      socket.on('data', (c: string) => (text += c));
      socket.on('close', () => resolve(text));
      socket.on('error', reject);
      socket.setTimeout(5000, () => reject(new Error(`no answer; got ${text}`)));
    });
    expect(answer).toMatch(/^HTTP\/1\.1 413 /);
    expect(answer).toMatch(/content-type: application\/json/i);
    expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))).toMatchObject({
      codes: [{ code: 'payloadTooLarge' }],
    });
    await expectAlive();
  });

  test('after a drained 413 the same connection serves the next request', async () => {
    const answer = await new Promise<string>((resolve, reject) => {
      let text = '';
      const socket = connect(box.port, '127.0.0.1', () => {
        socket.write(
          `POST ${NEW} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n` +
            `authorization: Bearer ${token}\r\ncontent-length: ${2 * 1024 * 1024}\r\n\r\n`,
        );
        socket.write(Buffer.alloc(2 * 1024 * 1024, 'x'));
        socket.write(
          `GET /venue-api/api/nearest?lat=50&lng=20 HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer ${token}\r\n\r\n`,
        );
      });
      socket.setEncoding('utf8');
      socket.on('data', (c: string) => {
        text += c;
        if (/HTTP\/1\.1 200 [\s\S]*\]$/.test(text)) {
          socket.end();
          resolve(text);
        }
      });
      socket.on('close', () => resolve(text));
      socket.on('error', reject);
      socket.setTimeout(5000, () => reject(new Error(`no answer; got ${text}`)));
    });
    expect(answer.match(/HTTP\/1\.1 \d{3}/g)).toEqual(['HTTP/1.1 413', 'HTTP/1.1 200']);
  });

  test('a body of exactly 1 MiB is read (and fails validation, not the size limit)', async () => {
    const prefix = '{"orderType":"TAKE_AWAY","pad":"';
    const text = `${prefix}${'x'.repeat(1024 * 1024 - prefix.length - 2)}"}`;
    expect(Buffer.byteLength(text)).toBe(1024 * 1024);
    await expectApiError(await post(text), 400, 'invalidField', ['/buckets']);
  });

  test.each([
    ['orderType is a number', '/orderType', { ...validOrder(), orderType: 5 }],
    ['orderType is unknown', '/orderType', { ...validOrder(), orderType: 'PICKUP' }],
    ['orderType is missing', '/orderType', { buckets: validOrder().buckets }],
    ['buckets is missing', '/buckets', { orderType: 'TAKE_AWAY' }],
    ['buckets is empty', '/buckets', { orderType: 'TAKE_AWAY', buckets: [] }],
    ['buckets is an object', '/buckets', { orderType: 'TAKE_AWAY', buckets: { venue: DEMO.openVenue } }],
    ['the venue is not a UUID', '/buckets/0/venue', { orderType: 'TAKE_AWAY', buckets: [{ venue: 'rynek' }] }],
    ['the venue is missing', '/buckets/0/venue', { orderType: 'TAKE_AWAY', buckets: [{ lines: [] }] }],
    ['quantity is 0', '/buckets/0/lines/0/quantity', withLine({ quantity: 0 })],
    ['quantity is negative', '/buckets/0/lines/0/quantity', withLine({ quantity: -1 })],
    ['quantity is 1.5', '/buckets/0/lines/0/quantity', withLine({ quantity: 1.5 })],
    ['quantity is a string', '/buckets/0/lines/0/quantity', withLine({ quantity: '2' })],
    ['quantity is missing', '/buckets/0/lines/0/quantity', withLine({ quantity: undefined })],
    ['productId is a number', '/buckets/0/lines/0/productId', withLine({ productId: 7 })],
    ['productId is empty', '/buckets/0/lines/0/productId', withLine({ productId: '' })],
    ['price is a string', '/buckets/0/lines/0/price', withLine({ price: '18.00' })],
    ['status is not NEW', '/buckets/0/lines/0/status', withLine({ status: 'DONE' })],
    [
      'lines is not an array',
      '/buckets/0/lines',
      { orderType: 'TAKE_AWAY', buckets: [{ venue: DEMO.openVenue, lines: 'zurek' }] },
    ],
    ['contact.name is a number', '/contact/name', { ...validOrder(), contact: { name: 1 } }],
    ['extra holds a number', '/extra/X-SOURCE', { ...validOrder(), extra: { 'X-SOURCE': 1 } }],
  ])('%s: 400 invalidField naming %s', async (_name, pointer, body) => {
    const res = await post(body);
    const err = await expectApiError(res, 400, 'invalidField', [pointer]);
    expect(err.codes[0]!.message).toContain(pointer);
  });

  test('the second line of the second bucket is named by its own pointer', async () => {
    const body = {
      orderType: 'TAKE_AWAY',
      buckets: [
        { venue: DEMO.openVenue },
        {
          venue: DEMO.venues[1]!.id,
          lines: [
            { productId: 'zurek', quantity: 1 },
            { productId: 'rosol', quantity: 0 },
          ],
        },
      ],
    };
    await expectApiError(await post(body), 400, 'invalidField', ['/buckets/1/lines/1/quantity']);
  });

  test.each([
    ['null', 'null'],
    ['an array', '[]'],
    ['a string', '"order"'],
    ['a number', '42'],
  ])('a JSON %s instead of an object is 400 invalidField naming the root', async (_name, text) => {
    await expectApiError(await post(text), 400, 'invalidField', ['/']);
  });

  test('several bad fields are all reported, each with its pointer', async () => {
    const res = await post({ orderType: 5, buckets: [{ venue: 'x' }] });
    const text = await res.text();
    expect(res.status).toBe(400);
    const body = JSON.parse(text) as { codes: { code: string; args: string[] }[] };
    expect(body.codes.every((c) => c.code === 'invalidField')).toBe(true);
    expect(body.codes.map((c) => c.args[0]).sort()).toEqual(['/buckets/0/venue', '/orderType']);
  });

  test('deeply nested JSON is a 400, not a crash', async () => {
    const depth = 100_000;
    const res = await post(`{"orderType":"TAKE_AWAY","buckets":${'['.repeat(depth)}${']'.repeat(depth)}}`);
    expect(res.status).toBe(400);
    const body = (await res.json()) as { codes: { code: string }[] };
    expect(['invalidBody', 'invalidField']).toContain(body.codes[0]!.code);
    await expectAlive();
  });

  test('a missing or bad token is 401 whatever the body', async () => {
    await expectApiError(await box.post(NEW, 'forged', '{not json'), 401, 'unauthorized');
    await expectApiError(await box.post(NEW, undefined, validOrder()), 401, 'unauthorized');
  });
});

describe('paths that cannot be decoded', () => {
  test.each([
    ['a menu id', `/menu-api/api/menu/%E0%A4%A?channel=DINE_IN&instance=${DEMO.openVenue}`, 'menu'],
    ['an order id', '/ordering-api/api/order/%ZZ/append', 'id'],
  ])('malformed percent-encoding in %s is 400 invalidField, and the box stays up', async (_name, path, param) => {
    const method = path.endsWith('/append') ? 'POST' : 'GET';
    const res = await raw(path, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: method === 'POST' ? Buffer.from('{}') : undefined,
    });
    expect(res.status).toBe(400);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(JSON.parse(res.body)).toStrictEqual({
      message: expect.any(String),
      codes: [{ code: 'invalidField', message: expect.any(String), args: [param] }],
    });
    await expectAlive();
  });

  test('percent-encoded path parameters are decoded', async () => {
    const path = `/menu-api/api/menu/menu%2Dkrakow?channel=DINE_IN&instance=${DEMO.openVenue}`;
    expect((await raw(path, { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
  });
});

describe('every error', () => {
  test('is JSON, never carries a stack trace, and the box is alive after all of the above', async () => {
    const responses = await Promise.all([
      box.get('/nope'),
      box.get('/venue-api/api/nearest?lat=x&lng=1', token),
      box.get('/venue-api/api/nearest'),
      box.post(NEW, token, '{'),
      box.post(NEW, token, 'x', { 'content-type': 'text/plain' }),
      box.post(NEW, token, { orderType: 1 }),
      box.get(`/menu-api/api/menu/none?channel=DINE_IN&instance=${DEMO.openVenue}`, token),
    ]);
    for (const res of responses) {
      expect(res.status).toBeGreaterThanOrEqual(400);
      expect(res.headers.get('content-type')).toMatch(/^application\/json/);
      const text = await res.text();
      expect(text).not.toMatch(/\n\s+at |\.ts:\d|\.c?js:\d|node_modules/);
      expect(Object.keys(JSON.parse(text) as object).sort()).toEqual(['codes', 'message']);
    }
    await expectAlive();
    const fatal = box.logs.filter((l) => /"level":"(fatal|error)"/.test(l));
    expect(fatal).toEqual([]);
  });
});

function withLine(patch: Record<string, unknown>) {
  const line: Record<string, unknown> = { productId: 'zurek', price: 18, quantity: 2, status: 'NEW', ...patch };
  for (const k of Object.keys(line)) if (line[k] === undefined) delete line[k];
  return { orderType: 'TAKE_AWAY', buckets: [{ venue: DEMO.openVenue, lines: [line] }] };
}

describe('a command path asked with DELETE (docs/api.md "The API")', () => {
  test.each([
    [`/ordering-api/api/order/${DEMO.openVenue}/cancel`],
    [`/ordering-api/api/order/${DEMO.openVenue}/append`],
    // `new` is a command path too, not also an order id of GET order/{id}: Allow named GET and HEAD there.
    ['/ordering-api/api/order/new'],
  ])('DELETE %s is 405 with Allow: POST, OPTIONS', async (path) => {
    const res = await fetch(box.url(path), { method: 'DELETE', headers: { authorization: `Bearer ${token}` } });
    expect(res.headers.get('allow')).toBe('POST, OPTIONS');
    await expectApiError(res, 405, 'methodNotAllowed', ['DELETE']);
  });

  test('GET and HEAD of order/new are 405 too, as its Allow says; a real order id is still read', async () => {
    for (const method of ['GET', 'HEAD']) {
      const res = await fetch(box.url(NEW), { method, headers: { authorization: `Bearer ${token}` } });
      expect([method, res.status, res.headers.get('allow')]).toEqual([method, 405, 'POST, OPTIONS']);
    }
    const { orderId } = (await (await post(validOrder())).json()) as { orderId: string };
    expect((await box.get(`/ordering-api/api/order/${orderId}`, token)).status).toBe(200);
  });
});

describe('the bearer challenge (RFC 6750 3.1)', () => {
  test('no credentials: WWW-Authenticate: Bearer realm="venue-box", no error code; a bad token: invalid_token', async () => {
    const none = await box.get(NEAREST);
    expect(none.headers.get('www-authenticate')).toBe('Bearer realm="venue-box"');
    await expectApiError(none, 401, 'unauthorized');
    const bad = await box.get(NEAREST, 'not.a.token');
    expect(bad.headers.get('www-authenticate')).toBe('Bearer error="invalid_token"');
    await expectApiError(bad, 401, 'unauthorized');
  });
});

describe('the warehouse API without x-tenant', () => {
  test('is 400 invalidField naming the header, not 403', async () => {
    const staff = await box.token(DEMO.staff.username, DEMO.staff.password);
    const res = await fetch(box.url(`/warehouse-api/api/warehouse/${W1}/stock`), {
      method: 'POST',
      headers: {
        authorization: `Bearer ${staff.access_token}`,
        'content-type': 'application/json',
        'x-user': staff.UUID,
      },
      body: JSON.stringify({ items: ['a'] }),
    });
    await expectApiError(res, 400, 'invalidField', ['x-tenant']);
  });
});
