import { existsSync, mkdtempSync, readFileSync, readdirSync, writeFileSync, mkdirSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import nacl from 'tweetnacl';
import { afterEach, expect, test } from 'vitest';
import { createLogger } from '../../log.js';
import { type ImageExt, sha256Hex } from '../../shared/media.js';
import { keyIdOf } from '../../shared/sync-protocol.js';
import { saveDevice } from '../sync/enrolment/device.js';
import { createMediaFetcher } from './fetcher.js';
import { createMediaStore } from './store.js';

const image = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.alloc(60_000, 7)]);
const sha = sha256Hex(image);
let server: Server | undefined;
let stop: (() => Promise<void>) | undefined;
afterEach(async () => {
  await stop?.();
  await new Promise((r) => (server ? server.close(r) : r(undefined)));
  server = undefined;
});

/** A central that answers image GETs with `handle`; every request's Range header is recorded. */
async function central(
  handle: (req: IncomingMessage, res: import('node:http').ServerResponse, n: number) => void,
): Promise<{ url: string; ranges: (string | undefined)[] }> {
  const ranges: (string | undefined)[] = [];
  server = createServer((req, res) => {
    ranges.push(req.headers.range);
    handle(req, res, ranges.length);
  });
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, ranges };
}

function box(centralUrl: string, wanted: { sha256: string; ext: ImageExt }[], maxBytes = 1 << 30, retryMaxMs = 200) {
  const dataDir = mkdtempSync(join(tmpdir(), 'vb-media-'));
  const pair = nacl.sign.keyPair();
  saveDevice(dataDir, centralUrl, { deviceId: 'd', tenant: 't', venue: 'v', keyId: keyIdOf(pair.publicKey) }, pair);
  const store = createMediaStore(dataDir);
  const fetcher = createMediaFetcher({
    dataDir,
    store,
    log: createLogger('fatal'),
    diskFull: () => false,
    repo: { wanted: () => wanted },
    options: { maxBytes, requestTimeoutMs: 5000, retryMinMs: 50, retryMaxMs, enrolPollMs: 50 },
  });
  fetcher.run().catch(() => undefined); // a test that wants the failure calls run() itself: the same run
  stop = () => fetcher.stop();
  return { dataDir, store, fetcher };
}

const until = async (what: string, check: () => boolean) => {
  for (let i = 0; i < 200 && !check(); i++) await new Promise((r) => setTimeout(r, 25));
  if (!check()) throw new Error(`timed out: ${what}`);
};

test('a download cut off mid-way resumes from the bytes on disk (Range), and the whole is checked by its hash', async () => {
  const c = await central((req, res, n) => {
    if (n === 1) {
      // Half of the image, then the connection dies.
      res.writeHead(200, { 'content-type': 'image/jpeg', 'content-length': String(image.length) });
      res.write(image.subarray(0, 30_000), () => setTimeout(() => res.socket?.destroy(), 20));
      return;
    }
    const from = Number(/^bytes=(\d+)-$/.exec(req.headers.range ?? '')?.[1] ?? 0);
    res.writeHead(from > 0 ? 206 : 200, { 'content-type': 'image/jpeg' }).end(image.subarray(from));
  });
  const { dataDir } = box(c.url, [{ sha256: sha, ext: 'jpg' }]);
  await until('the image', () => existsSync(join(dataDir, 'media', `${sha}.jpg`)));
  expect(readFileSync(join(dataDir, 'media', `${sha}.jpg`)).equals(image)).toBe(true);
  expect(c.ranges).toEqual([undefined, 'bytes=30000-']);
  expect(readdirSync(join(dataDir, 'media', 'partial'))).toEqual([]);
});

test('bytes that do not hash to the name are thrown away and fetched again; images no menu names are removed', async () => {
  const c = await central((_req, res, n) => {
    const body = n === 1 ? Buffer.concat([image.subarray(0, 100), Buffer.from('x')]) : image;
    res.writeHead(200, { 'content-type': 'image/jpeg' }).end(body);
  });
  const wanted = [{ sha256: sha, ext: 'jpg' as ImageExt }];
  const { dataDir, fetcher } = box(c.url, wanted);
  mkdirSync(join(dataDir, 'media', 'partial'), { recursive: true });
  const stale = `${'c'.repeat(64)}.png`;
  writeFileSync(join(dataDir, 'media', stale), 'old');
  fetcher.wake();
  await until('the image', () => existsSync(join(dataDir, 'media', `${sha}.jpg`)));
  expect(readFileSync(join(dataDir, 'media', `${sha}.jpg`)).equals(image)).toBe(true);
  expect(c.ranges.length).toBe(2);
  expect(existsSync(join(dataDir, 'media', stale))).toBe(false);
  // Nothing named any more: the image goes too.
  wanted.length = 0;
  fetcher.wake();
  await until('the image removed', () => !existsSync(join(dataDir, 'media', `${sha}.jpg`)));
});

test('storage is bounded by maxBytes: images past the bound (in menu order) are not fetched', async () => {
  const other = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe1]), Buffer.alloc(60_000, 9)]);
  const bySha = new Map([
    [sha, image],
    [sha256Hex(other), other],
  ]);
  const c = await central((req, res) => {
    const name = req.url!.split('/').pop()!.split('.')[0]!;
    res.writeHead(200, { 'content-type': 'image/jpeg' }).end(bySha.get(name));
  });
  const { dataDir } = box(
    c.url,
    [
      { sha256: sha, ext: 'jpg' },
      { sha256: sha256Hex(other), ext: 'jpg' },
    ],
    50_000,
  );
  await until('the first image', () => existsSync(join(dataDir, 'media', `${sha}.jpg`)));
  await new Promise((r) => setTimeout(r, 300));
  expect(c.ranges.length).toBe(1);
  expect(existsSync(join(dataDir, 'media', `${sha256Hex(other)}.jpg`))).toBe(false);
});

/** When each request reached the central (ms since the first). */
async function timedCentral(answer: (res: import('node:http').ServerResponse, n: number) => void) {
  const at: number[] = [];
  const c = await central((_req, res, n) => {
    at.push(Date.now());
    answer(res, n);
  });
  return { ...c, gaps: () => at.slice(1).map((t, i) => t - at[i]!) };
}

test('a 503 with Retry-After is retried after the central\'s delay, not the backoff (docs/sync.md "Talking to the central")', async () => {
  const c = await timedCentral((res, n) => {
    if (n === 1) res.writeHead(503, { 'retry-after': '1' }).end('stopping');
    else res.writeHead(200, { 'content-type': 'image/jpeg' }).end(image);
  });
  const { dataDir } = box(c.url, [{ sha256: sha, ext: 'jpg' }], 1 << 30, 5000);
  await until('the image', () => existsSync(join(dataDir, 'media', `${sha}.jpg`)));
  expect(c.gaps()[0]).toBeGreaterThanOrEqual(950);
});

test('a refused device (401) waits retryMaxMs before it asks again', async () => {
  const c = await timedCentral((res, n) => {
    if (n === 1) res.writeHead(401, { 'content-type': 'application/json' }).end('{"message":"unknown device"}');
    else res.writeHead(200, { 'content-type': 'image/jpeg' }).end(image);
  });
  const { dataDir } = box(c.url, [{ sha256: sha, ext: 'jpg' }], 1 << 30, 1500);
  await until('the image', () => existsSync(join(dataDir, 'media', `${sha}.jpg`)));
  expect(c.gaps()[0]).toBeGreaterThanOrEqual(1450);
});

test('a bug in a pass ends run() with the error instead of a log line', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'vb-media-'));
  const pair = nacl.sign.keyPair();
  saveDevice(
    dataDir,
    'http://127.0.0.1:9',
    { deviceId: 'd', tenant: 't', venue: 'v', keyId: keyIdOf(pair.publicKey) },
    pair,
  );
  const bug = new TypeError('wanted is not iterable');
  const fetcher = createMediaFetcher({
    dataDir,
    store: createMediaStore(dataDir),
    log: createLogger('fatal'),
    diskFull: () => false,
    repo: {
      wanted: () => {
        throw bug;
      },
    },
    options: { maxBytes: 1 << 30, requestTimeoutMs: 5000, retryMinMs: 50, retryMaxMs: 200, enrolPollMs: 50 },
  });
  await expect(fetcher.run()).rejects.toBe(bug);
  await fetcher.stop();
});
