import Database from 'better-sqlite3';
import { beforeEach, describe, expect, test } from 'vitest';
import { migrate } from '../../db/migrate.js';
import { AppError } from '../../shared/errors.js';
import { createWarehouseRepo } from './repo.js';
import { type DocumentKind, parseDocument } from './schemas.js';
import { createOutbox } from '../sync/up/outbox.js';
import { createSyncRepo } from '../sync/repo.js';
import { createWarehouseService, type WarehouseService } from './service.js';

const T = '00000000-0000-4000-8000-000000000001';
const A = '00000000-0000-4000-8000-0000000000a1';
const B = '00000000-0000-4000-8000-0000000000a2';
const TTL = 60_000;
const u1 = { tenantId: T, userId: 'u1' };
const u2 = { tenantId: T, userId: 'u2' };

let db: Database.Database;
let svc: WarehouseService;
let clock: number;

beforeEach(() => {
  db = new Database(':memory:');
  db.pragma('foreign_keys = ON');
  migrate(db);
  db.prepare('INSERT INTO tenants (id, name) VALUES (?, ?)').run(T, 't');
  for (const id of [A, B]) db.prepare('INSERT INTO warehouses (tenant_id, id, name) VALUES (?, ?, ?)').run(T, id, id);
  clock = Date.UTC(2026, 10, 5, 12);
  svc = createWarehouseService({
    repo: createWarehouseRepo(db),
    outbox: createOutbox(createSyncRepo(db)),
    now: () => clock,
    lockTtlMs: TTL,
  });
});

const post = (
  actor: typeof u1,
  kind: DocumentKind,
  items: [string, number][],
  extra: Record<string, unknown> = {},
  w = A,
) =>
  svc.postDocument(
    actor,
    w,
    parseDocument(kind, { items: items.map(([id, qty]) => ({ id, unit: 'kg', qty })), ...extra }),
  );
const lock = (actor: typeof u1, id: string, qty: number) =>
  svc.lockItems(actor, A, 1, [{ id, unit: 'kg', qtyMicro: qty * 1e6 }]);
const stock = (id: string, w = A) => svc.stock(u1, w, [id]).items[0]!;
const refusal = (fn: () => unknown): AppError => {
  try {
    fn();
  } catch (err) {
    if (err instanceof AppError) return err;
    throw err;
  }
  throw new Error('expected a refusal');
};

describe('issues and locks', () => {
  test("an issue may use the caller's own locks, never another user's; the caller's lock shrinks to fit", () => {
    post(u1, 'PZ', [['a', 10]]);
    lock(u1, 'a', 5);
    lock(u2, 'a', 3);
    const err = refusal(() => post(u1, 'WZ', [['a', 8]]));
    expect(err.codes).toEqual([{ code: 'insufficientStock', message: expect.any(String), args: ['a', '7', '8'] }]);
    post(u1, 'WZ', [['a', 7]]);
    expect(stock('a')).toEqual({ id: 'a', unit: 'kg', qty: 3, locked: 3, available: 0 });
    expect(svc.releaseLocks(u2, A, ['a']).items).toEqual([{ id: 'a', unit: 'kg', released: 3 }]);
  });

  test('expired locks count for nothing, before and after the sweep', () => {
    post(u1, 'PZ', [['a', 4]]);
    lock(u2, 'a', 4);
    expect(refusal(() => post(u1, 'RW', [['a', 1]])).codes[0]!.code).toBe('insufficientStock');
    clock += TTL;
    expect(stock('a')).toMatchObject({ qty: 4, locked: 0, available: 4 });
    expect(lock(u1, 'a', 3).items[0]).toMatchObject({ requested: 3, locked: 3 });
    expect(svc.sweepExpiredLocks()).toBe(1);
    post(u2, 'WZ', [['a', 1]]);
    expect(stock('a')).toMatchObject({ qty: 3, locked: 3, available: 0 });
  });

  test('a second lock adds to the first and renews it', () => {
    post(u1, 'PZ', [['a', 10]]);
    lock(u1, 'a', 2);
    clock += TTL - 1;
    const r = lock(u1, 'a', 3);
    expect(r.expires).toBe(new Date(clock + TTL).toISOString());
    clock += 10;
    expect(stock('a')).toMatchObject({ locked: 5, available: 5 });
  });

  test('unlockItems releases the caller’s locks on the items first, in the same transaction', () => {
    post(u1, 'PZ', [['a', 5]]);
    lock(u2, 'a', 5);
    expect(refusal(() => post(u1, 'WZ', [['a', 1]], { unlockItems: true })).status).toBe(409);
    expect(stock('a')).toMatchObject({ locked: 5 });
    post(u2, 'WZ', [['a', 2]], { unlockItems: true });
    expect(stock('a')).toMatchObject({ qty: 3, locked: 0, available: 3 });
  });

  test('a stocktake that counts less than is locked trims locks: the caller first, then the newest', () => {
    post(u1, 'PZ', [['a', 10]]);
    lock(u2, 'a', 4);
    clock += 1000;
    lock({ tenantId: T, userId: 'u3' }, 'a', 4);
    const doc = post(u1, 'Inventory', [['a', 5]]).document;
    expect(doc.kind).toBe('Inventory');
    expect(stock('a')).toMatchObject({ qty: 5, locked: 5, available: 0 });
    expect(svc.releaseLocks({ tenantId: T, userId: 'u3' }, A, undefined).items).toEqual([
      { id: 'a', unit: 'kg', released: 1 },
    ]);
    const ledger = db.prepare('SELECT delta_qty_micro AS d FROM stock_ledger WHERE document_id = ?').all(doc.id);
    expect(ledger).toEqual([{ d: -5_000_000 }]);
  });
});

describe('documents', () => {
  test('MM moves stock between two warehouses in one transaction, checking units in both', () => {
    post(u1, 'PZ', [['a', 3]]);
    post(u1, 'PZ', [['b', 1]], {}, B);
    svc.postDocument(u1, A, parseDocument('MM', { targetWarehouse: B, items: [{ id: 'a', unit: 'kg', qty: 2 }] }));
    expect([stock('a').qty, stock('a', B).qty]).toEqual([1, 2]);
    svc.postDocument(u1, B, parseDocument('PZ', { items: [{ id: 'c', unit: 'l', qty: 1 }] }));
    post(u1, 'PZ', [['c', 1]]);
    const err = refusal(() =>
      post(
        u1,
        'MM',
        [
          ['c', 1],
          ['a', 1],
        ],
        { targetWarehouse: B },
      ),
    );
    expect(err.codes.map((c) => [c.code, ...c.args])).toEqual([['unitMismatch', 'c', 'l', 'kg']]);
    expect([stock('a').qty, stock('a', B).qty, stock('c').qty]).toEqual([1, 2, 1]);
    expect(refusal(() => post(u1, 'MM', [['a', 1]], { targetWarehouse: A })).codes[0]!.args).toEqual([
      '/targetWarehouse',
    ]);
  });

  test('numbers: per warehouse, kind and month; a client-used number is skipped; retry returns the stored one', () => {
    expect(post(u1, 'PZ', [['a', 1]]).document.number).toBe('PZ/2026/11/000001');
    post(u1, 'PZ', [['a', 1]], { number: 'PZ/2026/11/000002' });
    expect(post(u1, 'PZ', [['a', 1]]).document.number).toBe('PZ/2026/11/000003');
    expect(post(u1, 'PZ', [['a', 1]], {}, B).document.number).toBe('PZ/2026/11/000001');
    expect(post(u1, 'WZ', [['a', 1]]).document.number).toBe('WZ/2026/11/000001');
    clock = Date.UTC(2026, 11, 1);
    expect(post(u1, 'Inventory', [['a', 0]]).document.number).toBe('INV/2026/12/000001');
    const again = post(u2, 'PZ', [['a', 1]], { number: 'PZ/2026/11/000002' });
    expect(again.created).toBe(false);
    expect(again.document.user).toBe('u1');
    expect(refusal(() => post(u1, 'PZ', [['a', 2]], { number: 'PZ/2026/11/000002' })).codes[0]!.code).toBe('conflict');
  });

  test('the ledger and its documents are append-only', () => {
    post(u1, 'PZ', [['a', 1]]);
    expect(() => db.exec('UPDATE stock_ledger SET delta_qty_micro = 5')).toThrow(/append-only/);
    expect(() => db.exec('DELETE FROM stock_ledger')).toThrow(/append-only/);
    expect(() => db.exec('DELETE FROM stock_documents')).toThrow(/immutable/);
  });

  test('stock check finds a tampered cache and rebuild repairs it', () => {
    post(u1, 'PZ', [
      ['a', 2],
      ['b', 1],
    ]);
    db.exec("UPDATE stock_balances SET qty_micro = 7 WHERE item_id = 'a'");
    db.exec("DELETE FROM stock_balances WHERE item_id = 'b'");
    db.exec(`INSERT INTO stock_balances VALUES ('${T}', '${A}', 'ghost', 'kg', 1)`);
    expect(svc.checkLedger().differences.map((d) => [d.item, d.problem])).toEqual([
      ['a', 'cached quantity differs from the ledger'],
      ['b', 'no cached balance'],
      ['ghost', 'cached balance without ledger rows'],
    ]);
    expect(svc.rebuildBalances().differences).toHaveLength(3);
    expect(svc.checkLedger()).toEqual({ items: 2, differences: [] });
  });
});
