import { mkdtempSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, test } from 'vitest';
import { DEMO, startTestBox, type TestBox, UNLIMITED_CUSTOMER } from './support/box.js';
import { newOrder } from './support/orders.js';
import { fill, mountSmallDisk, unmountSmallDisk } from './support/small-disk.js';
import { freePort } from './support/ports.js';
import { joinStandby, standbyStatus, waitForStatus } from './support/standby.js';

// A full disk under either box of a pair (docs/operations.md "A standby box"): a small disk of its own
// (test/support/small-disk.ts); elsewhere the file is skipped, saying why.
const MiB = 1024 * 1024;
const disk = mountSmallDisk(import.meta.url, 'vb-standby-disk-');
const boxes: TestBox[] = [];
afterAll(async () => {
  for (const b of boxes) await b.stop('SIGKILL');
  unmountSmallDisk(disk);
});

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
    const filler = fill(disk!, 'filler', 64 * 1024);
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
    const filler = fill(disk!, 'filler', 2 * MiB);
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
