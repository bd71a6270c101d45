import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, expect, test } from 'vitest';
import { keyIdOf, PATHS } from '../src/shared/sync-protocol.js';
import { DEMO, startTestBox, type TestBox } from './support/box.js';
import { startTestCentral, type TestCentral } from './support/central.js';
import { type FaultProxy, startFaultProxy } from './support/fault-proxy.js';
import { command, newOrder } from './support/orders.js';
import { drained, enrol, waitFor } from './support/sync.js';
import { staff } from './warehouse-client.js';

let box: TestBox | undefined;
let central: TestCentral | undefined;
let proxy: FaultProxy | undefined;
let hostile: Server | undefined;
afterAll(async () => {
  await box?.stop();
  hostile?.close();
  await proxy?.close();
  await central?.stop();
});

test('during an outage new orders do not cut the backoff short: attempts thin out, not one per order', async () => {
  central = await startTestCentral();
  proxy = await startFaultProxy(central.port);
  box = await startTestBox({
    config: { sync: { flushDelayMs: 20, retryMinMs: 500, retryMaxMs: 4000, heartbeatSeconds: 1 } },
  });
  await enrol(box, proxy.url, await central.enrolCode(DEMO.openVenue));
  await waitFor('the first hello', () => (proxy!.seen.get('/sync-api/api/hello 200') ?? 0) > 0);
  proxy.set('down');
  // The sender's attempts (its hellos and batches): orders wake the sender alone. The catalogue's long poll backs
  // off on its own during the outage, and when it is cut depends on where its poll stood; it is not counted.
  const attempts = () =>
    [...proxy!.seen].filter(([k]) => /^\/sync-api\/api\/(hello|batches) reset$/.test(k)).reduce((n, [, v]) => n + v, 0);
  const s = await staff(box);
  const started = Date.now();
  for (let i = 0; i < 60; i++) {
    await command(box, s.token, 'new', newOrder(DEMO.openVenue, [{ productId: 'zurek', quantity: 1 }]));
    await new Promise((r) => setTimeout(r, 100));
  }
  const seconds = (Date.now() - started) / 1000;
  // 60 orders in about 6 s: delays from 0.5 s, doubling (docs/sync.md "Talking to the central"), a handful of attempts, never 60.
  expect(attempts()).toBeGreaterThan(0);
  expect(attempts()).toBeLessThan(Math.max(12, seconds * 2));
  proxy.set('pass');
  expect((await drained(box, 30_000)).backlog).toBe(0);
}, 60_000);

test('a 503 or 429 without Retry-After falls back to the backoff instead of retrying at once', async () => {
  // A central (or a proxy in front of it) that enrols the box, then answers everything with a bare 503.
  let requests = 0;
  hostile = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => {
      body += c;
    });
    req.on('end', () => {
      if (req.url === PATHS.enrol) {
        const { publicKey } = JSON.parse(body) as { publicKey: string };
        res.writeHead(201, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            deviceId: '11111111-2222-4333-8444-555555555555',
            tenant: DEMO.tenant,
            venue: DEMO.openVenue,
            keyId: keyIdOf(Buffer.from(publicKey, 'base64')),
          }),
        );
        return;
      }
      requests++;
      res.writeHead(requests % 2 ? 503 : 429, { 'content-type': 'text/plain' }).end('busy');
    });
  });
  await new Promise<void>((resolve) => hostile!.listen(0, '127.0.0.1', resolve));
  await box?.stop();
  box = await startTestBox({
    config: { sync: { flushDelayMs: 20, retryMinMs: 500, retryMaxMs: 4000, heartbeatSeconds: 1 } },
  });
  await enrol(box, `http://127.0.0.1:${(hostile.address() as AddressInfo).port}`, 'ANY');
  await waitFor('the first attempt', () => requests > 0);
  const from = requests;
  await new Promise((r) => setTimeout(r, 4000));
  // Delays of at least 0.5 s, doubling: a handful in 4 s (it was hundreds: a missing header read as 0 s).
  expect(requests - from).toBeLessThan(15);
  expect(box.logs.some((l) => l.includes('central answered 503') || l.includes('central answered 429'))).toBe(true);
}, 60_000);
