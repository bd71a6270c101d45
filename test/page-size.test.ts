import { renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, expect, test } from 'vitest';
import { DEMO, jsonLogs, startTestBox, type TestBox } from './support/box.js';
import { command, newOrder } from './support/orders.js';

let box: TestBox | undefined;
afterEach(async () => {
  await box?.stop();
  box = undefined;
});

const pageSizeOf = (file: string): number => {
  const db = new Database(file, { readonly: true });
  try {
    return db.pragma('page_size', { simple: true }) as number;
  } finally {
    db.close();
  }
};

async function orderStatus(b: TestBox, id: string, token: string): Promise<number> {
  for (let i = 0; i < 50; i++) {
    const res = await b.get(`/ordering-api/api/order/${id}`, token);
    if (res.status !== 404) return res.status;
    await new Promise((r) => setTimeout(r, 50));
  }
  return 404;
}

test('a box upgraded over a database with 4 KiB pages rewrites it with 1 KiB pages at its start, its orders kept', async () => {
  box = await startTestBox();
  const { dataDir } = box;
  const customer = await box.token();
  const { orderId } = await command(
    box,
    customer.access_token,
    'new',
    newOrder(DEMO.openVenue, [{ productId: 'zurek', quantity: 2 }]),
  );
  expect(await orderStatus(box, orderId, customer.access_token)).toBe(200);
  await box.stop();
  box = undefined;
  const file = join(dataDir, 'venue-box.db');
  expect(pageSizeOf(file)).toBe(1024);

  // The file as a box before 1 KiB pages made it.
  const old = new Database(file);
  old.pragma('page_size = 4096');
  old.prepare('VACUUM INTO ?').run(`${file}.4k`);
  old.close();
  rmSync(`${file}-wal`, { force: true });
  rmSync(`${file}-shm`, { force: true });
  renameSync(`${file}.4k`, file);
  expect(pageSizeOf(file)).toBe(4096);

  box = await startTestBox({ dataDir });
  const rewritten = jsonLogs(box).find((l) => l.msg === 'database rewritten with smaller pages');
  expect(rewritten).toMatchObject({ from: 4096, to: 1024 });
  expect(pageSizeOf(file)).toBe(1024);
  expect(await orderStatus(box, orderId, customer.access_token)).toBe(200);
  const again = await command(
    box,
    customer.access_token,
    'new',
    newOrder(DEMO.openVenue, [{ productId: 'zurek', quantity: 1 }]),
  );
  expect(await orderStatus(box, again.orderId, customer.access_token)).toBe(200);
});
