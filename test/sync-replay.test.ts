import pg from 'pg';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { PATHS, PROTOCOL, REQUEST_WINDOW_MS, SCHEMA, signDetached } from '../src/shared/sync-protocol.js';
import { createHash } from 'node:crypto';
import { startTestCentral, type TestCentral } from './support/central.js';
import { enrolledDevice, type SimDevice } from './support/sim-device.js';

// Signed requests are taken once (docs/sync.md "Signed requests"): a request captured on the wire and sent again,
// byte for byte, is refused with a code; a fresh one from the device is taken. Two central processes on one
// database share the nonces, as processes behind a balancer do; the second also takes boxes of protocol 1
// (--accept-protocol-1, while a fleet upgrades), which changes nothing for stamped requests.
let a: TestCentral;
let b: TestCentral;
beforeAll(async () => {
  a = await startTestCentral();
  b = await startTestCentral({ args: ['--database-url', a.databaseUrl, '--accept-protocol-1'] });
}, 60_000);
afterAll(async () => {
  expect(await b?.stop()).toBe(0);
  expect(await a?.stop()).toBe(0);
});

/** A request as captured on the wire: method, path, headers and body bytes, to send again as they were. */
interface Captured {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
}

async function capture(d: SimDevice, method: string, path: string, body = ''): Promise<Captured> {
  const headers = { ...(await d.signedHeaders(method, path, body)), 'content-type': 'application/json' };
  return { method, path, headers, body: method === 'GET' ? undefined : body };
}

async function send(central: TestCentral, c: Captured) {
  const res = await fetch(central.url(c.path), { method: c.method, headers: c.headers, body: c.body });
  const text = await res.text();
  return { status: res.status, text, body: text.startsWith('{') ? JSON.parse(text) : undefined };
}

const helloBody = (d: SimDevice) =>
  JSON.stringify({ protocol: PROTOCOL, schema: SCHEMA, boxTimeMs: d.clockMs, pendingSeq: 0, version: 'sim' });
const device = async (d: SimDevice) =>
  (await a.hq('/hq-api/api/devices')).find((x: { id: string }) => x.id === d.deviceId);
const codeOf = (r: { body?: { codes?: { code: string }[] } }) => r.body?.codes?.[0]?.code;

describe('a captured signed request sent again', () => {
  test('a hello: refused with requestReplayed at either process, the offset and contact kept; a fresh one taken', async () => {
    const d = await enrolledDevice(a);
    const hello = await capture(d, 'POST', PATHS.hello, helloBody(d));
    expect((await send(a, hello)).status).toBe(200);
    const before = await device(d);

    await new Promise((r) => setTimeout(r, 50));
    for (const central of [a, b]) {
      const again = await send(central, hello);
      expect(again.status).toBe(401);
      expect(codeOf(again)).toBe('requestReplayed');
    }
    const after = await device(d);
    expect(after.lastContactAt).toBe(before.lastContactAt);
    expect(after.clockOffsetMs).toBe(before.clockOffsetMs);
    // The device's own next hello: a new nonce, taken.
    expect((await d.hello()).status).toBe(200);
  });

  test('a catalogue poll: the snapshot once, then requestReplayed with no hash in the body', async () => {
    const d = await enrolledDevice(a);
    expect((await d.hello()).status).toBe(200);
    const poll = await capture(d, 'GET', `${PATHS.catalogue}?after=0&wait=0&snapshot=1`);
    const first = await send(b, poll);
    expect(first.status).toBe(200);
    expect(first.text).toMatch(/scrypt|passwordHash|secretHash/i);
    for (const central of [a, b]) {
      const again = await send(central, poll);
      expect(again.status).toBe(401);
      expect(codeOf(again)).toBe('requestReplayed');
      expect(again.text).not.toMatch(/scrypt|passwordHash|secretHash/i);
    }
    expect((await d.catalogue(0, 0, true)).status).toBe(200);
  });

  test('a request captured longer ago than the window: requestStale, whatever its nonce', async () => {
    const d = await enrolledDevice(a);
    expect((await d.hello()).status).toBe(200);
    const now = d.clockMs;
    d.clockMs = now - REQUEST_WINDOW_MS - 60_000;
    const old = await capture(d, 'GET', `${PATHS.events}?after=0`);
    d.clockMs = now;
    const res = await send(a, old);
    expect(res.status).toBe(401);
    expect(codeOf(res)).toBe('requestStale');
    expect((await d.tail(0)).status).toBe(200);
  });

  test('a stamp changed on the wire breaks the signature; an unstamped request (protocol 1) is 426 unless accepted', async () => {
    const d = await enrolledDevice(a);
    const hello = await capture(d, 'POST', PATHS.hello, helloBody(d));
    const moved = {
      ...hello,
      headers: { ...hello.headers, 'x-timestamp': String(Number(hello.headers['x-timestamp']) + 1) },
    };
    const bad = await send(a, moved);
    expect(bad.status).toBe(401);
    expect(codeOf(bad)).toBe('unauthorized');
    const renonced = { ...hello, headers: { ...hello.headers, 'x-nonce': 'A'.repeat(22) } };
    expect(codeOf(await send(a, renonced))).toBe('unauthorized');

    // A box of protocol 1 signs method, path, tenant, device and the body's hash, with no stamp: told to update,
    // unless the central takes protocol 1 for now, which says so in the hello's protocols.
    const body = JSON.stringify({ protocol: 1, schema: SCHEMA, boxTimeMs: Date.now(), pendingSeq: 0, version: 'old' });
    const text = `POST ${PATHS.hello}\n${d.tenant}\n${d.deviceId}\n${createHash('sha256').update(body).digest('hex')}`;
    const signature = Buffer.from(signDetached(Buffer.from(text), d.keys.secretKey)).toString('base64');
    const headers = { 'content-type': 'application/json', 'x-tenant': d.tenant, 'x-device': d.deviceId };
    const unstamped: Captured = {
      method: 'POST',
      path: PATHS.hello,
      body,
      headers: { ...headers, 'x-signature': signature },
    };
    const old = await send(a, unstamped);
    expect(old.status).toBe(426);
    expect(codeOf(old)).toBe('unsupportedProtocol');
    expect(old.body.message).toMatch(/x-timestamp and x-nonce/);
    const accepted = await send(b, unstamped);
    expect(accepted.status, accepted.text).toBe(200);
    expect(accepted.body.protocols).toEqual([1, PROTOCOL]);
    expect((await d.hello()).body.protocols).toEqual([PROTOCOL]); // a's answer
  });
});

describe("a box's clock", () => {
  test('1970: its hello measures the offset, and its requests are taken on that clock', async () => {
    const d = await enrolledDevice(a);
    d.clockMs = 5_000; // a Pi without a real-time clock, just after a power cut
    expect((await d.hello()).status).toBe(200);
    expect((await device(d)).clockOffsetMs).toBeLessThan(-50 * 365 * 86_400_000);
    expect((await d.catalogue(0, 0, true)).status).toBe(200);
    expect((await d.tail(0)).status).toBe(200);
  });

  test('set back a year since its last hello: a challenge, signed into the hello sent again; that one once only', async () => {
    const d = await enrolledDevice(a);
    expect((await d.hello()).status).toBe(200);
    d.clockMs -= 365 * 86_400_000;
    const stale = await capture(d, 'POST', PATHS.hello, helloBody(d));
    const refused = await send(a, stale);
    expect(refused.status).toBe(401);
    expect(codeOf(refused)).toBe('requestStale');
    const challenge = refused.body.codes[0].args[0] as string;
    expect(challenge).toMatch(/^[A-Za-z0-9_-]{22}$/);

    // A replayer cannot add the challenge to a hello it captured: the signature covers it.
    const forged = await send(a, { ...stale, headers: { ...stale.headers, 'x-challenge': challenge } });
    expect(codeOf(forged)).toBe('unauthorized');
    // The device signs it in (at the other process: the challenge is in the database) and is taken.
    const answered = {
      ...stale,
      headers: {
        ...(await d.signedHeaders('POST', PATHS.hello, stale.body!, challenge)),
        'content-type': 'application/json',
      },
    };
    expect((await send(b, answered)).status).toBe(200);
    expect((await device(d)).clockOffsetMs).toBeLessThan(-364 * 86_400_000);
    // Sent again: the nonce is spent, and so is the challenge.
    expect(codeOf(await send(a, answered))).toBe('requestReplayed');
    expect((await d.catalogue(0, 0)).status).toBe(200);
  });
});

describe('the nonce store', () => {
  test("keeps a device's nonces for two windows; its next hello removes the expired ones", async () => {
    const d = await enrolledDevice(a);
    expect((await d.hello()).status).toBe(200);
    expect((await d.tail(0)).status).toBe(200);
    const db = new pg.Client({ connectionString: a.databaseUrl });
    await db.connect();
    try {
      const rows = async () =>
        (
          await db.query(
            `SELECT nonce, expires_at - now() > interval '9 minutes' AS kept FROM request_nonces WHERE device_id = $1`,
            [d.deviceId],
          )
        ).rows as { nonce: string; kept: boolean }[];
      expect((await rows()).map((r) => r.kept)).toEqual([true, true]);
      await db.query(`UPDATE request_nonces SET expires_at = now() - interval '1 second' WHERE device_id = $1`, [
        d.deviceId,
      ]);
      expect((await d.hello()).status).toBe(200);
      expect(await rows()).toHaveLength(1);
    } finally {
      await db.end();
    }
  });
});
