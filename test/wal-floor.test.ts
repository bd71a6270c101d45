import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, test } from 'vitest';
import { freeBytesOf } from '../src/shared/files.js';
import { DEMO, startTestBox, type TestBox, UNLIMITED_CUSTOMER } from './support/box.js';
import { expectOneLineFailure, runCli } from './support/cli.js';
import { newOrder } from './support/orders.js';
import { mountSmallDisk, unmountSmallDisk } from './support/small-disk.js';

// docs/operations.md "The WAL on a small disk": the WAL's share of the room above the floor, and the floor a
// checkpoint needs.
const MiB = 1024 * 1024;

// An 8 MiB disk of its own (test/support/small-disk.ts); elsewhere that suite is skipped, saying why.
const disk = mountSmallDisk(import.meta.url, 'vb-wal-floor-', 8);
const boxes: TestBox[] = [];
const dirs: string[] = [];
afterAll(async () => {
  for (const box of boxes) await box.stop('SIGKILL');
  unmountSmallDisk(disk);
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

describe.skipIf(!disk)('the WAL on a small disk (8 MiB tmpfs, floor 1 MiB)', () => {
  test('a burst of orders fills the disk to the floor: the WAL stays within its share, and the box takes orders again by itself', async () => {
    const dataDir = join(disk!, 'box');
    mkdirSync(dataDir);
    const minFreeBytes = 1 * MiB;
    const box = await startTestBox({
      dataDir,
      config: { ...UNLIMITED_CUSTOMER, storage: { minFreeBytes, warnFreeBytes: 4 * MiB } },
    });
    boxes.push(box);
    // Four kiosks ordering back to back, with no pause: some 1,000 orders a second here, far past a venue's rush.
    const tokens = await Promise.all([1, 2, 3, 4].map(() => box.token()));
    let refused = false;
    let confirmed = 0;
    const clients = tokens.map(async (t) => {
      while (!refused) {
        const res = await box.post('/ordering-api/api/order/new', t.access_token, newOrder(DEMO.openVenue, LINES));
        const body = await res.text();
        if (res.status === 200) confirmed++;
        else if (res.status === 503 && body.includes('storageFull')) refused = true;
        else throw new Error(`${res.status} ${body}`);
      }
    });
    let maxWal = 0;
    /** The WAL beyond its share of the room above the floor (0.25, counting its own file), at its worst. */
    let maxOverShare = 0;
    const started = performance.now();
    while (!refused && performance.now() - started < 90_000) {
      await sleep(10);
      const wal = walBytes(dataDir);
      maxWal = Math.max(maxWal, wal);
      maxOverShare = Math.max(maxOverShare, wal - 0.25 * Math.max(0, freeBytesOf(disk!) + wal - minFreeBytes));
    }
    await Promise.all(clients);
    const atFloor = { wal: walBytes(dataDir), free: freeBytesOf(disk!), confirmed };

    // Nothing written any more: the checkpoint copies the WAL back and trims it, and the box takes orders again.
    const stopped = performance.now();
    let back: number | undefined;
    while (back === undefined && performance.now() - stopped < 20_000) {
      const res = await box.post(
        '/ordering-api/api/order/new',
        tokens[0]!.access_token,
        newOrder(DEMO.openVenue, LINES),
      );
      if (res.status === 200) back = performance.now() - stopped;
      else await sleep(100);
    }
    console.log(
      `WAL at most ${maxWal} bytes (${Math.round(maxOverShare)} past its share at worst); at the floor after ` +
        `${atFloor.confirmed} orders: WAL ${atFloor.wal}, free ${atFloor.free}; after the burst: WAL ` +
        `${walBytes(dataDir)}, free ${freeBytesOf(disk!)}; taking orders again after ${Math.round(back ?? -1)} ms`,
    );
    expect(refused).toBe(true);
    // The WAL stays a share of the room, past it by no more than what comes in between two looks of the
    // checkpointer; 7.7 MB of an 8 MiB disk before (checkpointed only once 32 MiB waited).
    expect(maxWal).toBeLessThan(2.5 * MiB);
    expect(maxOverShare).toBeLessThan(minFreeBytes);
    // At the floor the checkpoint found the room it needed: it never failed, and the WAL shrank.
    expect(box.logs.filter((l) => l.includes('WAL checkpoint failed'))).toEqual([]);
    expect(atFloor.wal).toBeLessThan(minFreeBytes);
    expect(back).toBeDefined();
    expect(back!).toBeLessThan(5_000);
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
