import { execFileSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, statfsSync, unlinkSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, test } from 'vitest';
import { DEMO, startTestBox, type TestBox, UNLIMITED_CUSTOMER } from './support/box.js';
import { newOrder } from './support/orders.js';
import { freePort, joinStandby, standbyStatus, waitForStatus } from './support/standby.js';

// A full disk under either box of a pair (docs/operations.md "A standby box"): a 40 MiB tmpfs of its own, which
// only root may mount; elsewhere the file is skipped, saying why.
const MiB = 1024 * 1024;
function mountSmallDisk(): string | undefined {
  const dir = mkdtempSync(join(tmpdir(), 'vb-standby-disk-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=40m', 'tmpfs', dir], { stdio: 'ignore' });
    return dir;
  } catch {
    rmSync(dir, { recursive: true, force: true });
    console.warn('test/standby-full-disk.test.ts skipped: `mount -t tmpfs` failed (it needs root)');
    return undefined;
  }
}
const disk = mountSmallDisk();
const boxes: TestBox[] = [];
afterAll(async () => {
  for (const b of boxes) await b.stop('SIGKILL');
  if (!disk) return;
  execFileSync('umount', [disk]);
  rmSync(disk, { recursive: true, force: true });
});

/** Fills `dir`'s disk with a file until at most `leave` bytes are free; returns the file. */
function fill(dir: string, leave: number): string {
  const file = join(dir, 'filler');
  const fd = openSync(file, 'a');
  const chunk = Buffer.alloc(MiB, 1);
  try {
    const { bavail, bsize } = statfsSync(dir);
    for (let rest = bavail * bsize - leave; rest > 0; rest -= chunk.length)
      writeSync(fd, chunk, 0, Math.min(MiB, rest));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
  } finally {
    closeSync(fd);
  }
  return file;
}

const CONFIG = { ...UNLIMITED_CUSTOMER, storage: { minFreeBytes: 4 * MiB, warnFreeBytes: 8 * MiB } };

describe.skipIf(!disk)('a full disk under one box of a pair', () => {
  test("the standby's disk full: the primary goes on alone; space back, the standby catches up", async () => {
    const primary = await startTestBox({ port: await freePort(), config: CONFIG });
    boxes.push(primary);
    const standbyDir = join(disk!, 'standby');
    const standbyPort = await freePort();
    await joinStandby(primary, standbyPort, standbyDir);
    const standby = await startTestBox({ dataDir: standbyDir, port: standbyPort, demo: false, config: CONFIG });
    boxes.push(standby);
    await waitForStatus(primary, (s) => s.state === 'synchronous');
    const filler = fill(disk!, 64 * 1024);
    const { access_token: token } = await primary.token();
    const ids: string[] = [];
    for (let i = 0; i < 60; i++) {
      const res = await primary.post(
        '/ordering-api/api/order/new',
        token,
        newOrder(DEMO.openVenue, [{ productId: 'zurek', quantity: 1 }]),
      );
      expect(res.status).toBe(200);
      ids.push(((await res.json()) as { orderId: string }).orderId);
    }
    // The standby could not store them: it said so and ended its stream; the primary confirmed them alone.
    expect((await standbyStatus(primary)).state).not.toBe('synchronous');
    expect(standby.logs.some((l) => l.includes('the standby could not store what the primary sent'))).toBe(true);
    unlinkSync(filler);
    await waitForStatus(primary, (s) => s.state === 'synchronous', 20_000);
    expect(standby.proc.exitCode).toBeNull();
    // Stopped, the standby's copy holds every confirmed order.
    await standby.stop('SIGTERM');
    const Database = (await import('better-sqlite3')).default;
    const db = new Database(join(standbyDir, 'venue-box.db'), { readonly: true });
    const has = db.prepare('SELECT 1 FROM order_commands WHERE order_id = ?');
    expect(ids.filter((id) => !has.get(id))).toEqual([]);
    db.close();
  });

  test("the primary's disk full: it refuses writes with 503 as alone; the pair stays in step", async () => {
    const dir = join(disk!, 'primary');
    const primary = await startTestBox({ dataDir: dir, port: await freePort(), config: CONFIG });
    boxes.push(primary);
    const standbyPort = await freePort();
    const standbyDir = mkdtempSync(join(tmpdir(), 'vb-standby-'));
    await joinStandby(primary, standbyPort, standbyDir);
    const standby = await startTestBox({ dataDir: standbyDir, port: standbyPort, demo: false, config: CONFIG });
    boxes.push(standby);
    await waitForStatus(primary, (s) => s.state === 'synchronous');
    const { access_token: token } = await primary.token();
    const filler = fill(disk!, 2 * MiB);
    await sleep(1100);
    const refused = await primary.post('/ordering-api/api/order/new', token, newOrder(DEMO.openVenue));
    expect(refused.status).toBe(503);
    expect(await refused.json()).toMatchObject({ codes: [{ code: 'storageFull' }] });
    unlinkSync(filler);
    await sleep(1100);
    const res = await primary.post('/ordering-api/api/order/new', token, newOrder(DEMO.openVenue));
    expect(res.status).toBe(200);
    expect((await standbyStatus(primary)).state).toBe('synchronous');
  });
});
