import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { DEMO, startTestBox, type TestBox } from './support/box.js';

/*
 * RFC 9112 section 6.3: a request whose body length is ambiguous is answered 400 and its connection closed,
 * so nothing after it on the connection can be read as another request (request smuggling). Raw sockets:
 * fetch and node:http never send such requests.
 */

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
const ORDER = JSON.stringify({ orderType: 'TAKE_AWAY', buckets: [{ venue: DEMO.openVenue }] });
// A request pipelined behind the body: answered only if the box framed the body by the shorter length.
const SMUGGLED = 'GET /venue-api/api/nearest?lat=50&lng=20 HTTP/1.1\r\nHost: x\r\n\r\n';

interface Exchange {
  /** Everything the box sent, as text. */
  text: string;
  /** True when the box closed the connection within the wait. */
  closed: boolean;
}

/** Writes the exact bytes, reads until the box closes the connection or `waitMs` passes. */
function exchange(bytes: string, waitMs = 1500): Promise<Exchange> {
  return new Promise((resolve, reject) => {
    const socket = connect(box.port, '127.0.0.1');
    let text = '';
    let done = false;
    const finish = (closed: boolean) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      resolve({ text, closed });
    };
    const timer = setTimeout(() => finish(false), waitMs);
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => (text += chunk));
    socket.on('close', () => finish(true));
    socket.on('error', (err: NodeJS.ErrnoException) => (err.code === 'ECONNRESET' ? finish(true) : reject(err)));
    socket.write(bytes, 'latin1');
  });
}

/**
 * The responses in what the box sent: status and parsed body of each. Every reply of the box has a Content-Length;
 * uWS's own reply to a request its parser refuses has none and closes the connection, so it ends the list.
 */
function responses(text: string): { status: number; body: { codes?: { code: string }[] } }[] {
  const out = [];
  for (let rest = text; rest.length > 0; ) {
    const end = rest.indexOf('\r\n\r\n');
    const head = rest.slice(0, end);
    const status = Number(head.slice(9, 12));
    const length = /\r\ncontent-length: (\d+)/i.exec(head);
    if (!length) {
      expect(head).toMatch(/\r\nConnection: close$/i);
      out.push({ status, body: {} });
      break;
    }
    out.push({
      status,
      body: JSON.parse(rest.slice(end + 4, end + 4 + Number(length[1]))) as { codes?: { code: string }[] },
    });
    rest = rest.slice(end + 4 + Number(length[1]));
  }
  return out;
}

const head = (lines: string[], path = NEW) =>
  `${[
    `POST ${path} HTTP/1.1`,
    'Host: x',
    `Authorization: Bearer ${token}`,
    'Content-Type: application/json',
    ...lines,
  ].join('\r\n')}\r\n\r\n`;

/** At least one response, every one a 400 invalidBody, and the connection closed. */
function expectRefused(ex: Exchange): void {
  const all = responses(ex.text);
  expect(all.length).toBeGreaterThan(0);
  for (const r of all) {
    expect(r.status).toBe(400);
    expect(r.body.codes!.map((c) => c.code)).toEqual(['invalidBody']);
  }
  expect(ex.closed).toBe(true);
}

/** Nothing was served: the connection is closed and no answer but a 400 came back. */
function expectNothingServed(ex: Exchange): void {
  expect(ex.closed).toBe(true);
  for (const r of responses(ex.text)) expect(r.status).toBe(400);
}

async function expectAlive(): Promise<void> {
  expect(box.proc.exitCode).toBeNull();
  expect((await box.get('/venue-api/api/nearest?lat=50&lng=20', token)).status).toBe(200);
}

describe('conflicting Content-Length', () => {
  const long = ORDER.length;
  test.each([
    [
      'two lines, the shorter first (the body as long as the first)',
      ['Content-Length: 5', `Content-Length: ${long}`],
      ORDER.slice(0, 5),
    ],
    ['two lines, the longer first', [`Content-Length: ${long}`, 'Content-Length: 5'], ORDER],
    ['a second line with a comma list', [`Content-Length: ${long}`, `Content-Length: ${long}, 5`], ORDER],
    ['a second line that is not a number', [`Content-Length: ${long}`, 'Content-Length: many'], ORDER],
    [
      'three lines, the last one different',
      [`Content-Length: ${long}`, `Content-Length: ${long}`, 'Content-Length: 5'],
      ORDER,
    ],
  ])('%s: 400 invalidBody and the connection closed', async (_name, lines, body) => {
    expectRefused(await exchange(head(lines) + body));
    await expectAlive();
  });

  test('a request smuggled behind the body (a proxy that reads the last length would pass it) is never served', async () => {
    // uWS frames by the first line: the order, then two more requests; a proxy reading the second line would
    // have seen a single request.
    const smuggled = SMUGGLED + head([`Content-Length: ${long}`]) + ORDER;
    const ex = await exchange(
      head([`Content-Length: ${long}`, `Content-Length: ${long + smuggled.length}`]) + ORDER + smuggled,
    );
    expectRefused(ex);
    await expectAlive();
  });

  test('a GET with two different Content-Length lines is refused too', async () => {
    const req = `${[
      'GET /venue-api/api/nearest?lat=50&lng=20 HTTP/1.1',
      'Host: x',
      `Authorization: Bearer ${token}`,
      'Content-Length: 3',
      'Content-Length: 0',
    ].join('\r\n')}\r\n\r\nabc`;
    expectRefused(await exchange(req));
  });

  test('identical copies are accepted: the command is confirmed and the connection stays open', async () => {
    const ex = await exchange(head([`Content-Length: ${long}`, `Content-Length: ${long}`]) + ORDER, 500);
    const [reply, ...more] = responses(ex.text);
    expect(reply!.status).toBe(200);
    expect(reply!.body).toMatchObject({ orderId: expect.stringMatching(/^[0-9a-f-]{36}$/) });
    expect(more).toEqual([]);
    expect(ex.closed).toBe(false);
  });

  // uWS refuses these itself before any handler runs: a 400 of its own, and the connection closed. What matters
  // is that nothing of them is served.
  test.each([
    ['one line with a comma list of different values', [`Content-Length: ${long}, 5`], ORDER],
    ['Content-Length with Transfer-Encoding', [`Content-Length: ${long}`, 'Transfer-Encoding: chunked'], ORDER],
    ['the shorter first, and what follows is no request', ['Content-Length: 5', `Content-Length: ${long}`], ORDER],
  ])('%s: the connection is closed and nothing is served', async (_name, lines, body) => {
    expectNothingServed(await exchange(head(lines) + body + SMUGGLED));
    await expectAlive();
  });
});
