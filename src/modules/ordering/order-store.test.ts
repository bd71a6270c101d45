import Database from 'better-sqlite3';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeEach, expect, test } from 'vitest';
import { migrate } from '../../db/migrate.js';
import { createOrderStore, type NewLine, type OrderStore } from './order-store.js';

let db: Database.Database;
let store: OrderStore;
const stored = (id: string) =>
  db.prepare('SELECT status, version, venues_json, lines_json, users_json FROM orders WHERE id = ?').get(id) as
    | { status: string; version: number; venues_json: string; lines_json: string; users_json: string }
    | undefined;

const line = (id: string, venue = 'v1'): NewLine => ({
  id,
  venue_id: venue,
  creator: 'ala',
  product_id: 'zurek',
  quantity: 1,
  price_minor: 1800,
  status: 'NEW',
  productJson: '{"name":"Zurek"}',
  created_ms: 1,
  updated_ms: 1,
  note: null,
});

function newOrder(id: string, venues = ['v1'], claimCode = '123456'): void {
  store.insertOrder({
    tenantId: 't',
    id,
    orderType: 'TAKE_AWAY',
    claimCode,
    source: 'box',
    contactJson: null,
    extraJson: null,
    nowMs: 1,
  });
  for (const v of venues) store.insertBucket('t', id, v);
  store.insertUser('t', id, 'ala', ['CREATOR', 'CUSTOMER']);
  store.insertLine('t', id, line(`${id}-l1`, venues[0]));
}

beforeEach(() => {
  db = new Database(':memory:');
  migrate(db);
  store = createOrderStore(db);
});

test('a unit writes each order it changed once, at its end; until then the database still holds the order before', () => {
  store.unit(() => {
    newOrder('o1');
    expect(stored('o1')).toBeUndefined();
    // Inside the unit the order reads as changed so far.
    expect(store.rows('t', 'o1')).toMatchObject({
      venueIds: ['v1'],
      lines: [{ id: 'o1-l1', round: null }],
      users: [{ userId: 'ala' }],
    });
    store.bumpVersion('t', 'o1');
    expect(stored('o1')).toBeUndefined();
  });
  expect(stored('o1')).toEqual({
    status: 'NEW',
    version: 1,
    venues_json: '["v1"]',
    users_json: '[{"userId":"ala","roles":["CREATOR","CUSTOMER"]}]',
    lines_json: JSON.stringify([
      {
        id: 'o1-l1',
        venue_id: 'v1',
        creator: 'ala',
        product_id: 'zurek',
        quantity: 1,
        price_minor: 1800,
        status: 'NEW',
        created_ms: 1,
        updated_ms: 1,
        note: null,
        product_json: '{"name":"Zurek"}',
        round: null,
      },
    ]),
  });
});

test('a unit that throws leaves the order as it was, and the next read sees the database', () => {
  store.unit(() => newOrder('o1'));
  db.exec('BEGIN');
  expect(() =>
    store.unit(() => {
      store.setStatus('t', 'o1', 'ORDERED', 1, 2);
      store.orderNewLines('t', 'o1', 1, 2);
      // The user's entry is written at once, inside the savepoint: it goes with it.
      store.insertUser('t', 'o1', 'ola', ['GUEST']);
      expect(store.userHasOrder('t', 'ola')).toBe(true);
      throw new Error('refused');
    }),
  ).toThrow('refused');
  db.exec('COMMIT');
  expect(stored('o1')).toMatchObject({ status: 'NEW', version: 0 });
  expect(store.userHasOrder('t', 'ola')).toBe(false);
  expect(store.unit(() => store.order('t', 'o1')?.status)).toBe('NEW');
  expect(store.lines('t', 'o1').map((l) => l.status)).toEqual(['NEW']);
});

test('rows handed out earlier in a unit keep what they said when the order changes after', () => {
  store.unit(() => newOrder('o1'));
  store.unit(() => {
    const row = store.order('t', 'o1')!;
    const lines = store.lines('t', 'o1');
    store.orderNewLines('t', 'o1', 1, 5);
    store.setStatus('t', 'o1', 'ORDERED', 1, 5);
    expect([row.status, lines[0]!.status, lines[0]!.round]).toEqual(['NEW', 'NEW', null]);
    expect([store.order('t', 'o1')!.status, store.lines('t', 'o1')[0]!.status]).toEqual(['ORDERED', 'ORDERED']);
  });
  expect(store.lines('t', 'o1')[0]).toMatchObject({ status: 'ORDERED', round: 1, updated_ms: 5 });
});

test('a unit inside another writes the outer one first, so the inner one rolling back keeps the outer changes', () => {
  store.unit(() => newOrder('o1'));
  store.unit(() => {
    store.setStatus('t', 'o1', 'ORDERED', 1, 2);
    expect(() =>
      store.unit(() => {
        expect(store.order('t', 'o1')!.status).toBe('ORDERED');
        store.setStatus('t', 'o1', 'READY', 1, 3);
        throw new Error('inner');
      }),
    ).toThrow('inner');
    expect(store.order('t', 'o1')!.status).toBe('ORDERED');
    store.bumpVersion('t', 'o1');
  });
  expect(stored('o1')).toMatchObject({ status: 'ORDERED', version: 1 });
});

test('outside a unit each change is written at once; an order that is not there changes nothing', () => {
  newOrder('o1');
  expect(JSON.parse(stored('o1')!.lines_json)).toHaveLength(1);
  store.setLineQuantity('t', 'o1', 'o1-l1', 3, 2);
  expect(JSON.parse(stored('o1')!.lines_json)[0]).toMatchObject({ quantity: 3, updated_ms: 2 });
  store.deleteLine('t', 'o1', 'o1-l1');
  expect(stored('o1')!.lines_json).toBe('[]');
  store.setStatus('t', 'nope', 'READY', 1, 2);
  expect(store.bumpVersion('t', 'nope')).toBe(0);
  expect(db.prepare('SELECT COUNT(*) AS n FROM orders').get()).toEqual({ n: 1 });
});

test('a claim code is held at each venue of an open order, and freed at all of them when it closes', () => {
  store.unit(() => newOrder('o1', ['v1', 'v2'], '111111'));
  store.unit(() => newOrder('o2', ['v3'], '222222'));
  const taken = () => [
    store.claimTaken('t', 'v1', '111111'),
    store.claimTaken('t', 'v2', '111111'),
    store.claimTaken('t', 'v3', '111111'),
    store.claimTaken('t', 'v3', '222222'),
  ];
  expect(taken()).toEqual([true, true, false, true]);
  expect([store.openOrdersOf('t', 'ala', 20), store.openOrdersOf('t', 'ala', 1)]).toEqual([2, 1]);
  store.unit(() => store.closeOrder('t', 'o1', 'COMPLETED', true, 9));
  expect(taken()).toEqual([false, false, false, true]);
  expect(store.openOrdersOf('t', 'ala', 20)).toBe(1);
  expect(store.userHasOrder('t', 'ala')).toBe(true);
  expect(store.userHasOrder('t', 'ola')).toBe(false);
});

test('a snapshot replaces the order whole, its users too', () => {
  store.unit(() => newOrder('o1'));
  const snapshot = {
    tenantId: 't',
    id: 'o1',
    orderType: 'TAKE_AWAY',
    status: 'READY',
    claimCode: '654321',
    totalMinor: 1800,
    editTotalMinor: 0,
    closed: 0,
    completed: 0,
    source: 'box',
    contactJson: null,
    extraJson: null,
    createdMs: 1,
    changedMs: 7,
    rounds: 1,
    version: 4,
    buckets: [{ venueId: 'v2' }],
    lines: [
      {
        id: 'x',
        venueId: 'v2',
        creator: 'ola',
        productId: 'p',
        quantity: 2,
        priceMinor: 900,
        status: 'ORDERED',
        productJson: '{}',
        createdMs: 1,
        updatedMs: 7,
        round: 1,
        note: 'hot',
      },
    ],
    users: [{ userId: 'ola', roles: ['CREATOR'] }],
  };
  store.replaceOrder(snapshot);
  expect(store.rows('t', 'o1')).toMatchObject({
    row: { status: 'READY', claim_code: '654321', version: 4 },
    venueIds: ['v2'],
    users: [{ userId: 'ola' }],
    lines: [{ id: 'x', venue_id: 'v2', round: 1, note: 'hot' }],
  });
  expect([store.userHasOrder('t', 'ala'), store.openOrdersOf('t', 'ola', 20)]).toEqual([false, 1]);
  expect([store.claimTaken('t', 'v1', '123456'), store.claimTaken('t', 'v2', '654321')]).toEqual([false, true]);
  store.replaceOrder({ ...snapshot, id: 'o2', closed: 1, status: 'CANCELLED' });
  expect(store.openOrdersOf('t', 'ola', 20)).toBe(1);
  // An order made earlier in the same unit is still inserted when a snapshot replaces it.
  store.unit(() => {
    newOrder('o3');
    store.replaceOrder({ ...snapshot, id: 'o3' });
  });
  expect(stored('o3')).toMatchObject({ status: 'READY', version: 4 });
});

test("a command that does not close its order rewrites neither the staff list's index nor the claim codes'", () => {
  const dir = mkdtempSync(join(tmpdir(), 'vb-order-store-'));
  try {
    const file = join(dir, 'orders.db');
    db = new Database(file);
    db.pragma('journal_mode = WAL');
    db.pragma('wal_autocheckpoint = 0');
    migrate(db);
    store = createOrderStore(db);
    for (let i = 0; i < 300; i++) store.unit(() => newOrder(`o${i}`, ['v1'], String(100000 + i)));
    /** The b-trees whose pages the WAL holds after `fn` (the WAL emptied first). */
    const written = (fn: () => void): string[] => {
      db.pragma('wal_checkpoint(TRUNCATE)');
      fn();
      const wal = readFileSync(`${file}-wal`);
      const pageSize = wal.readUInt32BE(8);
      const names = new Map(
        (db.prepare('SELECT name, pageno FROM dbstat').all() as { name: string; pageno: number }[]).map((r) => [
          r.pageno,
          r.name,
        ]),
      );
      const trees = new Set<string>();
      for (let off = 32; off + 24 + pageSize <= wal.length; off += 24 + pageSize)
        trees.add(names.get(wal.readUInt32BE(off)) ?? 'header');
      return [...trees].sort();
    };
    const submit = written(() =>
      store.unit(() => {
        store.orderNewLines('t', 'o7', 1, 5);
        store.setStatus('t', 'o7', 'ORDERED', 1, 5);
      }),
    );
    expect(submit).toContain('orders');
    expect(submit).not.toContain('orders_newest');
    expect(submit).not.toContain('orders_open_claim');
    // Closing takes the order's code out of the open orders' index.
    expect(written(() => store.unit(() => store.closeOrder('t', 'o8', 'COMPLETED', true, 6)))).toContain(
      'orders_open_claim',
    );
    expect(store.claimTaken('t', 'v1', '100008')).toBe(false);
    expect(store.claimTaken('t', 'v1', '100007')).toBe(true);
  } finally {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
