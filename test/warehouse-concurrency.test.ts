import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { startTestBox, type TestBox } from './support/box.js';
import { call, item, type Staff, staff, stockCli, W1, wpath } from './warehouse-client.js';

let box: TestBox;
let users: Staff[];

beforeAll(async () => {
  box = await startTestBox();
  users = [await staff(box), await staff(box, 'kuchnia', 'kuchnia-demo-1')];
});
afterAll(async () => {
  await box.stop();
});

const ITEMS = ['race-a', 'race-b', 'race-c'];
const START = 20;

test('parallel WZ documents, PZ retries and locks never drive stock below zero nor lose a PZ', async () => {
  await call(box, users[0], 'POST', wpath(W1, '/documents/pz'), { items: ITEMS.map((id) => item(id, START)) });
  const issued = new Map(ITEMS.map((id) => [id, 0]));
  const received = new Map(ITEMS.map((id) => [id, 0]));
  const statuses: number[] = [];
  let pzCreated = 0;
  const snapshots: { qty: number; locked: number; available: number }[] = [];

  const ops = Array.from({ length: 360 }, async (_, i) => {
    const who = users[i % 2]!;
    const id = ITEMS[i % 3]!;
    const kind = i % 6;
    if (kind <= 1) {
      const lines = ITEMS.slice(0, 1 + (i % 3)).map((x) => item(x, 1));
      const res = await call(box, who, 'POST', wpath(W1, '/documents/wz'), { items: lines, unlockItems: i % 4 === 0 });
      statuses.push(res.status);
      if (res.status === 201) for (const l of lines) issued.set(l.id, issued.get(l.id)! + 1);
    } else if (kind === 2) {
      statuses.push((await call(box, who, 'POST', wpath(W1, '/locks'), { qty: 2, items: [item(id, 1)] })).status);
    } else if (kind === 3) {
      // The same PZ twice at once, as a client retrying: exactly one is created, the other returns it.
      const body = { number: `PZ-RACE-${i}`, items: [item(id, 1)] };
      const pair = await Promise.all([0, 1].map(() => call(box, who, 'POST', wpath(W1, '/documents/pz'), body)));
      expect(pair.map((r) => r.status).sort()).toEqual([200, 201]);
      expect(pair[0]!.body.id).toBe(pair[1]!.body.id);
      received.set(id, received.get(id)! + 1);
      pzCreated += 1;
    } else if (kind === 4) {
      const res = await call(box, who, 'POST', wpath(W1, '/stock'), { items: ITEMS });
      statuses.push(res.status);
      snapshots.push(...res.body.items);
    } else {
      const packets = { packets: { menu: { qty: 2, items: [item('race-a', 1), item('race-b', 1)] } } };
      statuses.push((await call(box, who, 'POST', wpath(W1, '/locks/packets'), packets)).status);
      if (i % 12 === 5) statuses.push((await call(box, who, 'DELETE', wpath(W1, '/locks'))).status);
    }
  });
  await Promise.all(ops);

  expect(new Set(statuses)).toEqual(new Set([200, 201, 409]));
  for (const s of snapshots) {
    expect(s.available).toBeGreaterThanOrEqual(0);
    expect(s.locked).toBeLessThanOrEqual(s.qty);
  }
  const final = (await call(box, users[0], 'POST', wpath(W1, '/stock'), { items: ITEMS })).body
    .items as typeof snapshots;
  ITEMS.forEach((id, k) => {
    expect(final[k]!.qty).toBe(START + received.get(id)! - issued.get(id)!);
    expect(final[k]!.available).toBeGreaterThanOrEqual(0);
  });
  expect([...issued.values()].some((n) => n > 0)).toBe(true);

  // The ledger check agrees with the cache, while the box runs (WAL readers) and after it stops.
  const live = stockCli(box.dataDir, 'check');
  expect([live.status, live.stdout]).toEqual([0, expect.stringMatching(/, 0 differences\n$/)]);
  await box.stop();
  expect(stockCli(box.dataDir, 'check').status).toBe(0);
  const db = new Database(join(box.dataDir, 'venue-box.db'), { readonly: true });
  const pz = db
    .prepare("SELECT COUNT(*) AS n FROM stock_documents WHERE kind = 'PZ' AND number LIKE 'PZ-RACE-%'")
    .get() as { n: number };
  db.close();
  expect(pz.n).toBe(pzCreated);
});
