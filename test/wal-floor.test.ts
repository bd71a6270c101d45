import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, test } from 'vitest';
import { freeBytesOf } from '../src/shared/files.js';
import { DEMO, startTestBox, type TestBox, UNLIMITED_CUSTOMER } from './support/box.js';
import { expectOneLineFailure, runCli } from './support/cli.js';
import { newOrder } from './support/orders.js';
import { mountSmallDisk, unmountSmallDisk } from './support/small-disk.js';

// docs/operations.md "The WAL on a small disk": the WAL's share of the room above the floor, and the floor a
// checkpoint needs.
const MiB = 1024 * 1024;

// An 8 MiB disk for each test that fills one (test/support/small-disk.ts: vitest may run them in any order);
// elsewhere that suite is skipped, saying why.
const disk = mountSmallDisk(import.meta.url, 'vb-wal-floor-', 8);
const killDisk = disk ? mountSmallDisk(import.meta.url, 'vb-wal-floor-kill-', 8) : undefined;
const boxes: TestBox[] = [];
const dirs: string[] = [];
afterAll(async () => {
  for (const box of boxes) await box.stop('SIGKILL');
  unmountSmallDisk(disk);
  unmountSmallDisk(killDisk);
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const walBytes = (dataDir: string): number => {
  try {
    return statSync(join(dataDir, 'venue-box.db-wal')).size;
  } catch {
    return 0;
  }
};

const LINES = [
  { productId: 'zurek', quantity: 1 },
  { productId: 'woda', quantity: 2 },
  { productId: 'pierogi-ruskie', quantity: 1 },
];
const minFreeBytes = 1 * MiB;
// Every order is made (a kiosk's token may hold as many open ones as it likes here).
const CONFIG = {
  ordering: { ...UNLIMITED_CUSTOMER.ordering, maxOpenPerAnonymousUser: 10_000 },
  storage: { minFreeBytes, warnFreeBytes: 4 * MiB },
};

/**
 * Four kiosks ordering back to back, with no pause (a few hundred orders a second here, far past a venue's rush):
 * until the first 503 storageFull (`untilFull` false), or through them (each kiosk waits 50 ms and orders again)
 * until none was confirmed for 3 s: the disk holds what it can. Returns the orders confirmed, and the WAL sampled
 * every 10 ms: its largest size, and its worst excess over its share of the room above the floor (a quarter, its
 * own file counted).
 */
async function burst(box: TestBox, tokens: string[], on: string, untilFull: boolean) {
  let refused = false;
  let done = false;
  let lastConfirmed = performance.now();
  const confirmed: string[] = [];
  const clients = tokens.map(async (token) => {
    while (!done) {
      const res = await box.post('/ordering-api/api/order/new', token, newOrder(DEMO.openVenue, LINES));
      const body = await res.text();
      if (res.status === 200) {
        confirmed.push((JSON.parse(body) as { orderId: string }).orderId);
        lastConfirmed = performance.now();
      } else if (res.status === 503 && body.includes('storageFull')) {
        refused = true;
        if (untilFull) await sleep(50);
      } else throw new Error(`${res.status} ${body}`);
    }
  });
  const wal = { max: 0, overShare: 0 };
  const started = performance.now();
  while (!done && performance.now() - started < 90_000) {
    await sleep(10);
    const bytes = walBytes(box.dataDir);
    const free = freeBytesOf(on);
    wal.max = Math.max(wal.max, bytes);
    wal.overShare = Math.max(wal.overShare, bytes - 0.25 * Math.max(0, free + bytes - minFreeBytes));
    done = untilFull ? performance.now() - lastConfirmed > 3000 : refused;
  }
  done = true;
  await Promise.all(clients);
  return { refused, confirmed, wal };
}

/** Orders until one is confirmed (every 100 ms, for at most 20 s): the ms it took, or undefined. */
async function takesOrdersAgain(box: TestBox, token: string): Promise<number | undefined> {
  const start = performance.now();
  while (performance.now() - start < 20_000) {
    const res = await box.post('/ordering-api/api/order/new', token, newOrder(DEMO.openVenue, LINES));
    if (res.status === 200) return Math.round(performance.now() - start);
    await sleep(100);
  }
  return undefined;
}

async function startOnTheDisk(on: string): Promise<{ box: TestBox; tokens: string[] }> {
  const dataDir = join(on, 'box');
  mkdirSync(dataDir);
  const box = await startTestBox({ dataDir, config: CONFIG });
  boxes.push(box);
  const tokens = (await Promise.all([1, 2, 3, 4].map(() => box.token()))).map((t) => t.access_token);
  return { box, tokens };
}

describe.skipIf(!disk || !killDisk)('the WAL on a small disk (8 MiB tmpfs, floor 1 MiB)', () => {
  test('a burst of orders fills the disk to the floor: the WAL stays within its share, and the box takes orders again by itself', async () => {
    const { box, tokens } = await startOnTheDisk(disk!);
    const first = await burst(box, tokens, disk!, false);
    const atFirst = { wal: walBytes(box.dataDir), free: freeBytesOf(disk!) };
    // Nothing written any more: the checkpoint copies the WAL back and trims it, and the box takes orders again.
    const back = await takesOrdersAgain(box, tokens[0]!);
    // Then on through the 503s, until the disk holds all it can: orders, not WAL.
    const rest = await burst(box, tokens, disk!, true);
    const db = statSync(join(box.dataDir, 'venue-box.db')).size;
    const atEnd = { wal: walBytes(box.dataDir), free: freeBytesOf(disk!) };
    const worst = (k: 'max' | 'overShare') => Math.round(Math.max(first.wal[k], rest.wal[k]));
    console.log(
      `first 503 after ${first.confirmed.length} orders (WAL ${atFirst.wal}, free ${atFirst.free}), taking orders ` +
        `again ${back} ms after the burst stopped; full after ${rest.confirmed.length} more: database ${db}, WAL ` +
        `${atEnd.wal}, free ${atEnd.free}. WAL at most ${worst('max')} bytes, ${worst('overShare')} past its ` +
        `share at worst`,
    );
    expect(first.refused).toBe(true);
    expect(back).toBeDefined();
    expect(back!).toBeLessThan(5_000);
    // The WAL stays a share of the room (a quarter, past it by what comes in while a checkpoint runs), and whatever
    // the checkpoints' pace under half the room: writes stop once the free space less the WAL is at the floor. It
    // took the whole disk before (checkpointed once 32 MiB waited).
    expect(worst('max')).toBeLessThan(4 * MiB);
    // Its checkpoints always found the room they needed, and what fills the disk is the orders.
    expect(box.logs.filter((l) => l.includes('WAL checkpoint failed'))).toEqual([]);
    expect(db).toBeGreaterThan(5 * MiB);
    expect(atEnd.wal).toBeLessThan(minFreeBytes);
    expect(atEnd.free - atEnd.wal).toBeLessThan(2 * minFreeBytes);
  }, 150_000);

  test('killed (-9) at the floor, its checkpoint under way: every confirmed order is there after the restart, which takes orders again', async () => {
    const { box, tokens } = await startOnTheDisk(killDisk!);
    const { refused, confirmed } = await burst(box, tokens, killDisk!, false);
    expect(refused).toBe(true);
    // At once: the checkpoint that makes room (and its trim of the WAL) is under way or about to be.
    await box.stop('SIGKILL');
    const again = await startTestBox({ dataDir: box.dataDir, config: CONFIG });
    boxes.push(again);
    const back = await takesOrdersAgain(again, tokens[0]!);
    if (back === undefined)
      console.log(
        again.logs
          .filter((l) => !l.includes('"level":"info"'))
          .slice(0, 12)
          .join('\n'),
      );
    // Read beside the running box (WAL: a reader of its own): every confirmed command is stored, and all are applied.
    const db = new Database(join(box.dataDir, 'venue-box.db'), { readonly: true });
    try {
      const stored = db.prepare('SELECT 1 FROM order_commands WHERE order_id = ?');
      expect(confirmed.filter((id) => !stored.get(id))).toEqual([]);
      const pending = db.prepare('SELECT count(*) AS n FROM order_commands WHERE processed_ms IS NULL');
      const started = performance.now();
      while ((pending.get() as { n: number }).n > 0 && performance.now() - started < 30_000) await sleep(100);
      const applied = Math.round(performance.now() - started);
      const order = db.prepare('SELECT 1 FROM orders WHERE id = ?');
      console.log(
        `killed at the floor after ${confirmed.length} orders; restarted: taking orders again after ${back} ms, ` +
          `every confirmed one applied after ${applied} ms`,
      );
      expect(back).toBeDefined();
      expect(confirmed.filter((id) => !order.get(id))).toEqual([]);
    } finally {
      db.close();
    }
  }, 150_000);
});

test('a floor below what a checkpoint needs is refused at start: exit 78, one line naming the option', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'vb-wal-floor-config-'));
  dirs.push(dir);
  const file = join(dir, 'config.json');
  for (const minFreeBytes of [0, 512 * 1024, MiB - 1]) {
    writeFileSync(file, JSON.stringify({ storage: { minFreeBytes } }));
    const r = runCli(['serve', '--data-dir', join(dir, 'data'), '--config', file], 20_000);
    expectOneLineFailure(r, new RegExp(`storage/minFreeBytes: ${minFreeBytes} is below 1048576`), 78);
  }
  // The lowest floor that works starts.
  const box = await startTestBox({ config: { storage: { minFreeBytes: MiB } } });
  boxes.push(box);
  expect((await box.get('/readyz')).status).toBe(200);
});
