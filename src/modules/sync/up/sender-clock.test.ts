import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterEach, expect, test } from 'vitest';
import { migrate } from '../../../db/migrate.js';
import { GENESIS_HASH, keyIdOf, PATHS, PROTOCOL, SCHEMA } from '../../../shared/sync-protocol.js';
import type { Head } from '../../../shared/sync-messages.js';
import { newKeyPair, saveDevice } from '../enrolment/device.js';
import { createSyncRepo } from '../repo.js';
import { createOutbox } from './outbox.js';
import { createSender } from './sender.js';

// The box never trusts its clock for sync (docs/sync.md "Clocks"): its heartbeat counts on the monotonic clock,
// and a wall clock set while it runs brings a hello before the next batch, so the central's offset for the box is
// that of the clock the batch's events were written on.

let server: Server | undefined;
let dir: string | undefined;
afterEach(() => {
  server?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
  server = dir = undefined;
});

const YEAR = 365 * 86_400_000;

/** A central that acknowledges every batch and records each request: `hello <boxTimeMs>` or `batch <first>`. */
async function recordingCentral() {
  const calls: string[] = [];
  let head: Head = { epoch: 1, seq: 0, hash: GENESIS_HASH };
  server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      const text = Buffer.concat(parts).toString('utf8');
      let body: unknown;
      if (req.url === PATHS.hello) {
        calls.push(`hello ${(JSON.parse(text) as { boxTimeMs: number }).boxTimeMs}`);
        body = { head, serverTimeMs: Date.now(), protocols: [PROTOCOL], schema: SCHEMA };
      } else {
        const h = JSON.parse(text.split('\n', 1)[0]!) as { firstSeq: number; lastSeq: number; lastHash: string };
        calls.push(`batch ${h.firstSeq}`);
        head = { epoch: 1, seq: h.lastSeq, hash: h.lastHash };
        body = { ackedSeq: h.lastSeq, ackedHash: h.lastHash, deadLetters: [] };
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    });
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server!.address() as AddressInfo).port}`, calls };
}

test('a wall clock set back a year while the box runs: a hello on the new clock comes before the next batch', async () => {
  const central = await recordingCentral();
  const db = new Database(':memory:');
  migrate(db);
  const repo = createSyncRepo(db);
  const outbox = createOutbox(repo);
  dir = mkdtempSync(join(tmpdir(), 'vb-sender-clock-'));
  const pair = newKeyPair();
  saveDevice(dir, central.url, { deviceId: 'd1', tenant: 't', venue: 'v', keyId: keyIdOf(pair.publicKey) }, pair);
  let wallOffsetMs = YEAR; // a year ahead at first, as a box whose RTC was set wrong
  const sender = createSender({
    repo,
    dataDir: dir,
    log: pino({ level: 'silent' }),
    now: () => Date.now() + wallOffsetMs,
    monotonic: () => performance.now(),
    options: {
      flushDelayMs: 0,
      retryMinMs: 10,
      retryMaxMs: 1000,
      heartbeatMs: 60_000,
      requestTimeoutMs: 5000,
      enrolPollMs: 10,
    },
    signerFor: () => async () => new Uint8Array(64),
    reinstate: { apply: () => undefined },
    version: 'test',
  });
  const acked = async (seq: number) => {
    const until = Date.now() + 10_000;
    while (repo.state().ackedSeq < seq && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
    expect(repo.state().ackedSeq).toBe(seq);
  };
  const running = sender.run();
  try {
    outbox.append('t', 'warehouse.changed', 'w1', { id: 'w1', name: 'Magazyn 1' }, Date.now() + wallOffsetMs);
    sender.wake();
    await acked(1);
    // NTP sets the clock right; the heartbeat is a minute away on either clock.
    wallOffsetMs = 0;
    outbox.append('t', 'warehouse.changed', 'w2', { id: 'w2', name: 'Magazyn 2' }, Date.now());
    sender.wake();
    await acked(2);
  } finally {
    await sender.stop();
    await running;
  }
  const kinds = central.calls.map((c) => c.split(' ')[0]);
  expect(kinds).toEqual(['hello', 'batch', 'hello', 'batch']);
  const [first, second] = central.calls.filter((c) => c.startsWith('hello')).map((c) => Number(c.split(' ')[1]));
  expect(first! - Date.now()).toBeGreaterThan(YEAR - 60_000);
  expect(Math.abs(second! - Date.now())).toBeLessThan(60_000);
});
