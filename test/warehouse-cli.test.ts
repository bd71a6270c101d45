import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { expect, test } from 'vitest';
import { startTestBox } from './support/box.js';
import { call, item, staff, stockCli, W1, wpath } from './warehouse-client.js';

test('stock check reports a cache that differs from the ledger; stock rebuild repairs it', async () => {
  const box = await startTestBox();
  const kelner = await staff(box);
  await call(box, kelner, 'POST', wpath(W1, '/documents/pz'), { items: [item('cli-a', 2), item('cli-b', 1.25)] });
  await call(box, kelner, 'POST', wpath(W1, '/documents/wz'), { items: [item('cli-a', 0.5)] });
  await box.stop();
  expect(stockCli(box.dataDir, 'check')).toMatchObject({ status: 0, stdout: 'stock check: 2 items, 0 differences\n' });

  const db = new Database(join(box.dataDir, 'venue-box.db'));
  db.exec("UPDATE stock_balances SET qty_micro = 9000000 WHERE item_id = 'cli-a'");
  db.exec("DELETE FROM stock_balances WHERE item_id = 'cli-b'");
  db.close();

  const check = stockCli(box.dataDir, 'check');
  expect(check.status).toBe(1);
  expect(check.stdout).toContain(
    `warehouse ${W1} item cli-a: cached 9 kg, ledger 1.5 kg (cached quantity differs from the ledger)`,
  );
  expect(check.stdout).toContain('item cli-b: cached none, ledger 1.25 kg (no cached balance)');
  expect(check.stdout).toMatch(/stock check: 2 items, 2 differences\n$/);

  const rebuild = stockCli(box.dataDir, 'rebuild');
  expect([rebuild.status, rebuild.stdout.split('\n').at(-2)]).toEqual([
    0,
    'stock rebuild: 2 items, 2 repaired, 0 not repairable',
  ]);
  expect(stockCli(box.dataDir, 'check')).toMatchObject({ status: 0, stdout: 'stock check: 2 items, 0 differences\n' });

  // The repaired cache serves the API again.
  const again = await startTestBox({ dataDir: box.dataDir });
  const res = await call(again, await staff(again), 'POST', wpath(W1, '/stock'), { items: ['cli-a', 'cli-b'] });
  expect(res.body.items.map((i: { qty: number }) => i.qty)).toEqual([1.5, 1.25]);
  await again.stop();
});

test('stock commands refuse a data directory without a database, and unknown actions', () => {
  const empty = mkdtempSync(join(tmpdir(), 'vb-empty-'));
  const none = stockCli(empty, 'check');
  expect([none.status, none.stderr]).toEqual([66, expect.stringContaining('no database at')]);
  expect(stockCli(empty, 'frobnicate').status).toBe(64);
});
