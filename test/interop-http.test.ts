import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { DEMO, startTestBox, type TestBox } from './support/box.js';

// HTTP as clients and proxies speak it (RFC 9110, 9112), over a raw TCP socket where fetch would hide it.
let box: TestBox;
let token: string;
beforeAll(async () => {
  box = await startTestBox();
  token = (await box.token()).access_token;
});
afterAll(async () => {
  await box.stop();
});

/** Sends raw bytes on a new connection and resolves with everything the box wrote before closing (or 1 s). */
function raw(request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(box.port, '127.0.0.1');
    let got = '';
    const done = () => {
      socket.destroy();
      resolve(got);
    };
    const timer = setTimeout(done, 1000);
    socket.on('data', (d) => {
      got += d.toString('latin1');
    });
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(got);
    });
    socket.on('error', reject);
    socket.write(request);
  });
}
const head = (text: string) => text.slice(0, text.indexOf('\r\n\r\n'));
const NEAREST = '/venue-api/api/nearest?lat=50.06&lng=19.94';

describe('HEAD', () => {
  test("HEAD on a GET route answers the GET's status and headers, Content-Length included, without a body", async () => {
    const get = await raw(
      `GET ${NEAREST} HTTP/1.1\r\nHost: box\r\nAuthorization: Bearer ${token}\r\nConnection: close\r\n\r\n`,
    );
    const res = await raw(
      `HEAD ${NEAREST} HTTP/1.1\r\nHost: box\r\nAuthorization: Bearer ${token}\r\nConnection: close\r\n\r\n`,
    );
    expect(res).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    const length = /content-length: (\d+)/i.exec(head(res))![1];
    expect(Number(length)).toBe(get.length - head(get).length - 4);
    expect(Number(length)).toBeGreaterThan(100);
    expect(res.endsWith('\r\n\r\n')).toBe(true); // nothing after the headers
  });

  test("HEAD without a token is the GET's 401, without a body; fetch agrees", async () => {
    const res = await fetch(box.url(NEAREST), { method: 'HEAD' });
    expect(res.status).toBe(401);
    expect(await res.text()).toBe('');
  });
});

describe('a wrong method on a known path is 405 with Allow (RFC 9110 15.5.6)', () => {
  test.each([
    ['DELETE', NEAREST, 'GET, HEAD, OPTIONS'],
    ['POST', NEAREST, 'GET, HEAD, OPTIONS'],
    ['GET', `/ordering-api/api/order/${DEMO.openVenue}/append`, 'POST, OPTIONS'],
    ['PUT', '/auth-oauth2/oauth/token', 'POST, OPTIONS'],
    ['POST', '/ordering-api/ws', 'GET, HEAD, OPTIONS'],
    ['GET', `/menu-api/api/menu/${DEMO.menu}/locks`, 'PUT, OPTIONS'],
  ])('%s %s', async (method, path, allow) => {
    const res = await fetch(box.url(path), { method, headers: { authorization: `Bearer ${token}` } });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe(allow);
    expect(await res.json()).toMatchObject({ codes: [{ code: 'methodNotAllowed', args: [method] }] });
  });

  test('an unknown path is still 404', async () => {
    const res = await fetch(box.url('/nothing/here'), { method: 'DELETE' });
    expect(res.status).toBe(404);
  });

  test('OPTIONS on a known path is 204 with Allow', async () => {
    const res = await fetch(box.url('/ordering-api/api/order/new'), { method: 'OPTIONS' });
    expect(res.status).toBe(204);
    // `new` is the command's path, not also an order id of GET /ordering-api/api/order/{id} (test/http-errors.test.ts).
    expect(res.headers.get('allow')).toBe('POST, OPTIONS');
  });
});

describe('HTTP/1.0 (curl --http1.0, ApacheBench, nginx without proxy_http_version 1.1) and malformed request lines', () => {
  // uWS answers these in its parser, before the box's code runs (docs/architecture.md "Runtime and native addons"):
  // an HTTP/1.0 request line gets 505, a request without Host 400; the uWS of Node 20 closed both without a word.
  test('an HTTP/1.0 request gets 505, not a closed connection; so does the health check of a checker in HTTP/1.0 mode', async () => {
    for (const path of ['/venue-api/api/nearest?lat=50&lng=20', '/healthz']) {
      const res = await raw(`GET ${path} HTTP/1.0\r\nHost: box\r\n\r\n`);
      expect(res).toMatch(/^HTTP\/1\.1 505 HTTP Version Not Supported\r\n/);
      expect(head(res)).toMatch(/\r\nConnection: close$/i);
    }
  });

  test('HTTP/1.1 without Host is 400; OPTIONS * and an absolute-form target get 505', async () => {
    expect(await raw('GET /healthz HTTP/1.1\r\n\r\n')).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
    expect(await raw('OPTIONS * HTTP/1.1\r\nHost: box\r\n\r\n')).toMatch(/^HTTP\/1\.1 505 /);
    expect(await raw('GET http://box/healthz HTTP/1.1\r\nHost: box\r\n\r\n')).toMatch(/^HTTP\/1\.1 505 /);
    // The box still serves afterwards.
    expect(await raw('GET /healthz HTTP/1.1\r\nHost: box\r\nConnection: close\r\n\r\n')).toMatch(/^HTTP\/1\.1 200 /);
  });

  test('the same request as HTTP/1.1 is answered (what a proxy must send: proxy_http_version 1.1)', async () => {
    const res = await raw(
      'GET /venue-api/api/nearest?lat=50&lng=20 HTTP/1.1\r\nHost: box\r\nConnection: close\r\n\r\n',
    );
    expect(res).toMatch(/^HTTP\/1\.1 401 /);
  });

  test('no response names the server or its version', async () => {
    const res = await raw('GET /healthz HTTP/1.1\r\nHost: box\r\nConnection: close\r\n\r\n');
    expect(res).toMatch(/^HTTP\/1\.1 200 /);
    expect(head(res)).not.toMatch(/\r\n(uWebSockets|Server):/i);
  });
});
