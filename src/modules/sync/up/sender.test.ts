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
import { createSyncRepo, type SyncRepo } from '../repo.js';
import { createOutbox } from './outbox.js';
import { createSender } from './sender.js';

// The sender reads the next batch while one is in flight (docs/sync.md "On the box"): what it read ahead is sent
// only when the central's answer left the box exactly where it was read from.

let server: Server | undefined;
let dir: string | undefined;
afterEach(() => {
  server?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
  server = dir = undefined;
});

type Answer = (first: number, last: number, lastHash: string) => { status: number; body: unknown };

/** A central that answers hello with `head()` and each batch by `answer`, recording the ranges it was sent. */
async function fakeCentral(head: () => Head, answer: Answer) {
  const ranges: [number, number][] = [];
  server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      const reply = (status: number, body: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      };
      if (req.url === PATHS.hello)
        return reply(200, { head: head(), serverTimeMs: Date.now(), protocols: [PROTOCOL], schema: SCHEMA });
      const header = JSON.parse(Buffer.concat(parts).toString('utf8').split('\n', 1)[0]!);
      ranges.push([header.firstSeq, header.lastSeq]);
      const a = answer(header.firstSeq, header.lastSeq, header.lastHash);
      reply(a.status, a.body);
    });
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server!.address() as AddressInfo).port}`, ranges };
}

/** An enrolled box's sender over `events` small events, run until the central acknowledged them all. */
async function drain(repo: SyncRepo, central: string, events: number): Promise<void> {
  dir = mkdtempSync(join(tmpdir(), 'vb-sender-'));
  const pair = newKeyPair();
  saveDevice(dir, central, { deviceId: 'd1', tenant: 't', venue: 'v', keyId: keyIdOf(pair.publicKey) }, pair);
  const sender = createSender({
    repo,
    dataDir: dir,
    log: pino({ level: 'silent' }),
    now: Date.now,
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
  const running = sender.run();
  const until = Date.now() + 10_000;
  while (repo.state().ackedSeq < events && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
  await sender.stop();
  await running;
}

function boxWith(events: number): SyncRepo {
  const db = new Database(':memory:');
  migrate(db);
  const repo = createSyncRepo(db);
  const outbox = createOutbox(repo);
  for (let n = 1; n <= events; n++)
    outbox.append('t', 'warehouse.changed', `w${n}`, { id: `w${n}`, name: `Magazyn ${n}` }, n);
  return repo;
}

test('the central moved the box back mid-drain (restored from a backup): the next batch starts after its head, not after the batch read ahead', async () => {
  const repo = boxWith(1200);
  let head: Head = { epoch: 1, seq: 0, hash: GENESIS_HASH };
  let restored = false;
  const central = await fakeCentral(
    () => head,
    (first, last, lastHash) => {
      if (first === head.seq + 1 && (restored || first === 1)) {
        head = { epoch: 1, seq: last, hash: lastHash };
        return { status: 200, body: { ackedSeq: last, ackedHash: lastHash, deadLetters: [] } };
      }
      if (!restored) {
        // The second batch finds a central restored from a backup that ends at seq 300.
        restored = true;
        head = { epoch: 1, seq: 300, hash: repo.one(300)!.chainHash };
      }
      const message = `the central expects seq ${head.seq + 1}`;
      const codes = [{ code: 'syncGap', message, params: [String(head.seq + 1)] }];
      return { status: 409, body: { message, codes, expectedSeq: head.seq + 1, head } };
    },
  );
  await drain(repo, central.url, 1200);
  expect(central.ranges).toEqual([
    [1, 500],
    [501, 1000],
    [301, 800],
    [801, 1200],
  ]);
  expect(repo.state().ackedSeq).toBe(1200);
});

test('an acknowledgement lost on the way: after the hello the box goes on from the central head, each batch once', async () => {
  const repo = boxWith(1200);
  let head: Head = { epoch: 1, seq: 0, hash: GENESIS_HASH };
  let lost = false;
  const central = await fakeCentral(
    () => head,
    (first, last, lastHash) => {
      expect(first).toBe(head.seq + 1);
      head = { epoch: 1, seq: last, hash: lastHash };
      if (first === 501 && !lost) {
        // Committed, but the answer never reaches the box.
        lost = true;
        return { status: 503, body: { message: 'lost' } };
      }
      return { status: 200, body: { ackedSeq: last, ackedHash: lastHash, deadLetters: [] } };
    },
  );
  await drain(repo, central.url, 1200);
  expect(central.ranges).toEqual([
    [1, 500],
    [501, 1000],
    [1001, 1200],
  ]);
});
