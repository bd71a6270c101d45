import { mkdtempSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import nacl from 'tweetnacl';
import { afterEach, expect, test } from 'vitest';
import { createLogger } from '../../../log.js';
import type { CatalogueResponse } from '../../../shared/catalogue-protocol.js';
import { keyIdOf } from '../../../shared/sync-protocol.js';
import { CatalogueApplyError } from './apply.js';
import { saveDevice } from '../enrolment/device.js';
import { createPuller } from './puller.js';

let server: Server | undefined;
afterEach(() => new Promise((r) => (server ? server.close(r) : r(undefined))));

/**
 * An enrolled box's puller against a central answering every poll with a snapshot at rev 1, naming `release` when
 * given (an older central names none).
 */
async function puller(apply: (res: CatalogueResponse) => { items: number; venues: number }, release?: null) {
  let polls = 0;
  const urls: string[] = [];
  server = createServer((req, res) => {
    polls++;
    urls.push(req.url ?? '');
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ mode: 'snapshot', tenant: 't', rev: 1, checksum: 'c', items: [], release }));
  });
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
  const dataDir = mkdtempSync(join(tmpdir(), 'vb-puller-'));
  const pair = nacl.sign.keyPair();
  saveDevice(
    dataDir,
    `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    { deviceId: 'd', tenant: 't', venue: 'v', keyId: keyIdOf(pair.publicKey) },
    pair,
  );
  const errors: string[] = [];
  const p = createPuller({
    dataDir,
    log: createLogger('fatal'),
    setError: (m) => errors.push(m),
    clearError: () => undefined,
    apply: (_t, res) => apply(res),
    state: () => ({ tenantId: 't', rev: 0, checksum: null, appliedMs: null, lastError: null, lastErrorMs: null }),
    options: { waitSeconds: 1, requestTimeoutMs: 5000, retryMinMs: 20, retryMaxMs: 50, enrolPollMs: 20 },
  });
  return { p, errors, polls: () => polls, urls };
}

test('a change set that cannot be applied is asked for again after the backoff, the error recorded', async () => {
  let calls = 0;
  const { p, errors } = await puller(() => {
    calls++;
    throw new CatalogueApplyError('menu m: /root is invalid');
  });
  const run = p.run();
  while (calls < 3) await new Promise((r) => setTimeout(r, 10));
  expect(errors[0]).toBe('menu m: /root is invalid');
  await p.stop();
  await expect(run).resolves.toBeUndefined();
});

test('a bug while applying ends run() with the error instead of a log line', async () => {
  const bug = new TypeError("Cannot read properties of undefined (reading 'id')");
  const { p, polls } = await puller(() => {
    throw bug;
  });
  await expect(p.run()).rejects.toBe(bug);
  expect(polls()).toBe(1);
  await p.stop();
});

test('each poll names the rollout the central named last, so a rollout changed between polls answers at once', async () => {
  const told = await puller(() => ({ items: 0, venues: 0 }), null);
  const run = told.p.run();
  while (told.urls.length < 3) await new Promise((r) => setTimeout(r, 10));
  await told.p.stop();
  await run;
  // The first poll knows nothing yet; after an answer naming no release, every poll says `none`.
  expect(told.urls[0]).not.toContain('release=');
  for (const url of told.urls.slice(1)) expect(new URL(url, 'http://c').searchParams.get('release')).toBe('none');
  server!.close();
  server = undefined;

  // An older central names no release at all: nothing is sent back to it.
  const older = await puller(() => ({ items: 0, venues: 0 }));
  const again = older.p.run();
  while (older.urls.length < 3) await new Promise((r) => setTimeout(r, 10));
  await older.p.stop();
  await again;
  for (const url of older.urls) expect(url).not.toContain('release=');
});
