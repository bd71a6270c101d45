import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { DEMO, requestToken, startTestBox, type TestBox, UNLIMITED_CUSTOMER } from './support/box.js';
import { command, newOrder } from './support/orders.js';
import { fill, mountSmallDisk, unmountSmallDisk } from './support/small-disk.js';

const MiB = 1024 * 1024;

// A small disk of its own (test/support/small-disk.ts); elsewhere the suite is skipped, saying why.
const disk = mountSmallDisk(import.meta.url, 'vb-full-disk-');
const boxes: TestBox[] = [];

afterAll(async () => {
  for (const box of boxes) await box.stop();
  unmountSmallDisk(disk);
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** A log line arrives through the box's stdout a moment after the request that caused it: wait for it. */
async function logged(box: TestBox, text: string): Promise<boolean> {
  for (let i = 0; i < 100 && !box.logs.some((l) => l.includes(text)); i++) await sleep(20);
  return box.logs.some((l) => l.includes(text));
}
/** The guard trusts one look at the disk for a second. */
const afterNextLook = () => sleep(1100);

async function start(name: string, minFreeBytes: number, warnFreeBytes: number): Promise<TestBox> {
  const dataDir = join(disk!, name);
  mkdirSync(dataDir);
  const box = await startTestBox({
    dataDir,
    config: { ...UNLIMITED_CUSTOMER, storage: { minFreeBytes, warnFreeBytes } },
  });
  boxes.push(box);
  return box;
}

const append = (box: TestBox, token: string, orderId: string) =>
  box.post(`/ordering-api/api/order/${orderId}/append`, token, {
    venue: DEMO.openVenue,
    lines: [{ productId: 'woda', quantity: 1 }],
  });

/** Waits until the order holds every line in `ids` (commands are applied just after their 200). */
async function expectApplied(box: TestBox, token: string, orderId: string, ids: string[]): Promise<void> {
  let present = new Set<string>();
  for (let i = 0; i < 200; i++) {
    const res = await box.get(`/ordering-api/api/order/${orderId}`, token);
    if (res.status === 200) {
      const order = (await res.json()) as { buckets: { lines: { id: string }[] }[] };
      present = new Set(order.buckets.flatMap((b) => b.lines.map((l) => l.id)));
      if (ids.every((id) => present.has(id))) return;
    }
    await sleep(25);
  }
  expect(ids.filter((id) => !present.has(id))).toEqual([]);
}

describe.skipIf(!disk)('a full data disk (40 MiB tmpfs)', () => {
  test('below storage.minFreeBytes writes get 503 storageFull, reads go on, and the box recovers by itself', async () => {
    const box = await start('floor', 8 * MiB, 16 * MiB);
    const t = await box.token();
    const order = await command(box, t.access_token, 'new', newOrder(DEMO.openVenue));
    const confirmed: string[] = [];
    for (let i = 0; i < 5; i++)
      confirmed.push(
        (
          await command(box, t.access_token, `${order.orderId}/append`, {
            venue: DEMO.openVenue,
            lines: [{ productId: 'woda', quantity: 1 }],
          })
        ).lines[0]!,
      );

    // Between the warning and the floor: still served, and the log warns.
    fill(disk!, 'floor-filler-1', 12 * MiB);
    await afterNextLook();
    expect((await append(box, t.access_token, order.orderId)).status).toBe(200);
    expect(await logged(box, 'data disk is nearly full')).toBe(true);

    fill(disk!, 'floor-filler-2', 4 * MiB);
    await afterNextLook();
    const refused = await append(box, t.access_token, order.orderId);
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('10');
    expect(((await refused.json()) as { codes: { code: string }[] }).codes.map((c) => c.code)).toEqual(['storageFull']);
    // The token endpoint writes too (refresh tokens), and keeps RFC 6749's shape.
    const tokenRes = await requestToken(box, { grant_type: 'password', username: 'anonymous', password: '' });
    expect(tokenRes.status).toBe(503);
    expect(tokenRes.headers.get('retry-after')).toBe('10');
    expect(await tokenRes.json()).toMatchObject({ error: 'temporarily_unavailable' });
    // Reads go on.
    expect((await box.get(`/ordering-api/api/order/${order.orderId}`, t.access_token)).status).toBe(200);
    expect((await box.get(`/menu-api/api/menu/${DEMO.menu}?channel=TAKE_AWAY`, t.access_token)).status).not.toBe(503);
    expect(await logged(box, 'data disk is full')).toBe(true);

    rmSync(join(disk!, 'floor-filler-1'));
    rmSync(join(disk!, 'floor-filler-2'));
    await afterNextLook();
    confirmed.push(
      (
        await command(box, t.access_token, `${order.orderId}/append`, {
          venue: DEMO.openVenue,
          lines: [{ productId: 'woda', quantity: 1 }],
        })
      ).lines[0]!,
    );
    expect((await requestToken(box, { grant_type: 'password', username: 'anonymous', password: '' })).status).toBe(200);
    await expectApplied(box, t.access_token, order.orderId, confirmed);
  });

  test('SQLITE_FULL that still happens (the disk filled behind the guard) is a 503 storageFull, never a 500, and loses nothing confirmed', async () => {
    // The lowest floor the box starts with (docs/operations.md "The WAL on a small disk"), and no warning level:
    // far above them the guard trusts its look at the disk for a second, and the disk fills within it.
    const box = await start('no-floor', MiB, MiB);
    const t = await box.token();
    const order = await command(box, t.access_token, 'new', newOrder(DEMO.openVenue));
    await afterNextLook();
    expect((await append(box, t.access_token, order.orderId)).status).toBe(200);
    fill(disk!, 'no-floor-filler', 0);

    const confirmed: string[] = [];
    let refused: Response | undefined;
    for (let i = 0; i < 2000 && !refused; i++) {
      const res = await append(box, t.access_token, order.orderId);
      if (res.status === 200) confirmed.push(((await res.json()) as { lines: string[] }).lines[0]!);
      else refused = res;
    }
    expect(refused?.status).toBe(503);
    expect(((await refused!.json()) as { codes: { code: string }[] }).codes.map((c) => c.code)).toEqual([
      'storageFull',
    ]);
    // The next write is refused by the guard at once, without asking SQLite.
    expect((await append(box, t.access_token, order.orderId)).status).toBe(503);
    expect((await box.get(`/ordering-api/api/order/${order.orderId}`, t.access_token)).status).toBe(200);
    expect(box.logs.some((l) => l.includes('"level":"error"') && l.includes('request failed'))).toBe(false);
    // SQLite itself ran out of space: the guard had not looked again yet.
    expect(box.logs.some((l) => l.includes('"code":"SQLITE_FULL"'))).toBe(true);

    rmSync(join(disk!, 'no-floor-filler'));
    await afterNextLook();
    confirmed.push(
      (
        await command(box, t.access_token, `${order.orderId}/append`, {
          venue: DEMO.openVenue,
          lines: [{ productId: 'woda', quantity: 1 }],
        })
      ).lines[0]!,
    );
    await expectApplied(box, t.access_token, order.orderId, confirmed);
  });
});
