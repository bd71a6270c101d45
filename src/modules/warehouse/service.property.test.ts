import Database from 'better-sqlite3';
import fc from 'fast-check';
import { expect, test } from 'vitest';
import { migrate } from '../../db/migrate.js';
import { AppError } from '../../shared/errors.js';
import { createWarehouseRepo } from './repo.js';
import { type DocumentKind, parseDocument } from './schemas.js';
import { createOutbox } from '../sync/up/outbox.js';
import { createSyncRepo } from '../sync/repo.js';
import { createWarehouseService } from './service.js';

const T = '00000000-0000-4000-8000-000000000001';
const W: readonly [string, string] = ['00000000-0000-4000-8000-0000000000a1', '00000000-0000-4000-8000-0000000000a2'];
const USERS = ['u1', 'u2', 'u3'];
const ITEMS = ['a', 'b'];
const TTL = 60_000;
const M = 1_000_000;

type Cmd =
  | {
      op: 'doc';
      kind: DocumentKind;
      w: number;
      user: string;
      number?: string;
      unlock: boolean;
      lines: { id: string; micro: number; wrongUnit: boolean }[];
    }
  | { op: 'lock'; w: number; user: string; packets: number; lines: { id: string; micro: number }[] }
  | { op: 'packets'; w: number; user: string; packets: { qty: number; lines: { id: string; micro: number }[] }[] }
  | { op: 'release'; w: number; user: string; ids?: string[] }
  | { op: 'tick'; ms: number }
  | { op: 'sweep' };

const line = fc.record({ id: fc.constantFrom(...ITEMS), micro: fc.integer({ min: 1, max: 6 * M }) });
const w = fc.integer({ min: 0, max: 1 });
const user = fc.constantFrom(...USERS);
const cmd: fc.Arbitrary<Cmd> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      op: fc.constant('doc' as const),
      kind: fc.constantFrom<DocumentKind>('PZ', 'PZ', 'WZ', 'RW', 'MM', 'Inventory'),
      w,
      user,
      number: fc.option(fc.constantFrom('N1', 'N2'), { nil: undefined }),
      unlock: fc.boolean(),
      lines: fc.array(
        fc.record({
          id: fc.constantFrom(...ITEMS),
          micro: fc.integer({ min: 0, max: 6 * M }),
          wrongUnit: fc.integer({ min: 0, max: 15 }).map((n) => n === 0),
        }),
        { maxLength: 4 },
      ),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      op: fc.constant('lock' as const),
      w,
      user,
      packets: fc.integer({ min: 1, max: 3 }),
      lines: fc.array(line, { maxLength: 3 }),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      op: fc.constant('packets' as const),
      w,
      user,
      packets: fc.array(fc.record({ qty: fc.integer({ min: 1, max: 4 }), lines: fc.array(line, { maxLength: 3 }) }), {
        maxLength: 3,
      }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      op: fc.constant('release' as const),
      w,
      user,
      ids: fc.option(fc.subarray(ITEMS), { nil: undefined }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('tick' as const), ms: fc.integer({ min: 0, max: 90_000 }) }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('sweep' as const) }) },
);

function world() {
  const db = new Database(':memory:');
  db.pragma('foreign_keys = ON');
  migrate(db);
  db.prepare('INSERT INTO tenants (id, name) VALUES (?, ?)').run(T, 't');
  for (const id of W) db.prepare('INSERT INTO warehouses (tenant_id, id, name) VALUES (?, ?, ?)').run(T, id, id);
  let clock = 1_000_000;
  const service = createWarehouseService({
    repo: createWarehouseRepo(db),
    outbox: createOutbox(createSyncRepo(db)),
    now: () => clock,
    lockTtlMs: TTL,
  });
  const rows = (sql: string, ...args: unknown[]) => db.prepare(sql).all(...args) as Record<string, number | string>[];
  const snapshot = () =>
    JSON.stringify([
      rows('SELECT * FROM stock_balances ORDER BY warehouse_id, item_id'),
      rows('SELECT * FROM stock_locks ORDER BY warehouse_id, item_id, user_id'),
      rows('SELECT COUNT(*) AS n FROM stock_ledger'),
      rows('SELECT COUNT(*) AS n FROM sync_outbox'),
    ]);
  const qty = (wh: string, id: string) =>
    (rows('SELECT qty_micro FROM stock_balances WHERE warehouse_id = ? AND item_id = ?', wh, id)[0]?.qty_micro ??
      0) as number;
  const live = (wh: string, id: string, userId?: string) =>
    rows(
      `SELECT COALESCE(SUM(qty_micro), 0) AS s FROM stock_locks WHERE warehouse_id = ? AND item_id = ? AND expires_ms > ?
      AND (? IS NULL OR user_id = ?)`,
      wh,
      id,
      clock,
      userId ?? null,
      userId ?? null,
    )[0]!.s as number;
  return {
    db,
    service,
    snapshot,
    qty,
    live,
    rows,
    tick: (ms: number) => {
      clock += ms;
    },
  };
}

test('random documents and locks keep qty = sum(ledger), 0 <= locked <= qty, whole packets', () => {
  fc.assert(
    fc.property(fc.array(cmd, { minLength: 1, maxLength: 40 }), (cmds) => {
      const x = world();
      const model = new Map<string, number>(); // expected qty per warehouse and item
      const key = (wh: string, id: string) => `${wh}/${id}`;
      for (const c of cmds) {
        const before = x.snapshot();
        const actor = { tenantId: T, userId: 'user' in c ? c.user : 'u1' };
        const wh = 'w' in c ? W[c.w]! : W[0];
        try {
          if (c.op === 'doc') {
            const body = {
              ...(c.number ? { number: c.number } : {}),
              unlockItems: c.unlock,
              items: c.lines.map((l) => ({ id: l.id, unit: l.wrongUnit ? 'l' : 'kg', qty: l.micro / M })),
              ...(c.kind === 'MM' ? { targetWarehouse: W[1 - c.w]! } : {}),
            };
            let input: ReturnType<typeof parseDocument>;
            try {
              input = parseDocument(c.kind, body);
            } catch (err) {
              expect((err as AppError).status).toBe(400); // qty 0 outside Inventory, an item counted twice
              continue;
            }
            const others = () =>
              USERS.filter((u) => u !== c.user)
                .map((u) => ITEMS.map((id) => x.live(wh, id, u)))
                .join();
            const othersBefore = others();
            const { created, document } = x.service.postDocument(actor, wh, input);
            // A new document is one stock.document event for the central, in its own transaction; a replay none.
            if (created) {
              const last = x.rows('SELECT kind, aggregate_id, envelope FROM sync_outbox ORDER BY seq DESC LIMIT 1')[0]!;
              expect([last.kind, last.aggregate_id]).toEqual(['stock.document', document.id]);
              const body = JSON.parse(last.envelope as string).body;
              expect(
                body.ledger.reduce(
                  (n: number, l: [string, number, string, string, number]) => n + (l[0] === wh ? l[4] : 0),
                  0,
                ),
              ).toBe(
                x.rows(
                  'SELECT COALESCE(SUM(delta_qty_micro), 0) AS s FROM stock_ledger WHERE document_id = ? AND warehouse_id = ?',
                  document.id,
                  wh,
                )[0]!.s,
              );
            }
            // Issues never touch other users' locks (only a stocktake that counts less may shrink them).
            if (c.kind !== 'Inventory') expect(others()).toBe(othersBefore);
            if (!created) expect(x.snapshot()).toBe(before);
            else {
              const sums = new Map<string, number>();
              for (const l of c.lines) sums.set(l.id, (sums.get(l.id) ?? 0) + l.micro);
              for (const [id, micro] of sums) {
                const k = key(wh, id);
                const was = model.get(k) ?? 0;
                model.set(k, c.kind === 'PZ' ? was + micro : c.kind === 'Inventory' ? micro : was - micro);
                if (c.kind === 'MM') model.set(key(W[1 - c.w]!, id), (model.get(key(W[1 - c.w]!, id)) ?? 0) + micro);
              }
            }
          } else if (c.op === 'lock') {
            const own = ITEMS.map((id) => x.live(wh, id, c.user));
            const r = x.service.lockItems(
              actor,
              wh,
              c.packets,
              c.lines.map((l) => ({ id: l.id, unit: 'kg', qtyMicro: l.micro })),
            );
            ITEMS.forEach((id, i) => {
              const got = r.items.filter((g) => g.id === id).reduce((s, g) => s + Math.round(g.locked * M), 0);
              expect(x.live(wh, id, c.user) - own[i]!).toBe(got);
            });
          } else if (c.op === 'packets') {
            const own = ITEMS.map((id) => x.live(wh, id, c.user));
            const r = x.service.lockPackets(
              actor,
              wh,
              c.packets.map((p, i) => ({
                name: `p${i}`,
                qty: p.qty,
                items: p.lines.map((l) => ({ id: l.id, unit: 'kg', qtyMicro: l.micro })),
              })),
            );
            // Whole packets: each item's lock grows by exactly k x (its need in the packet), summed over packets.
            ITEMS.forEach((id, i) => {
              const expected = c.packets.reduce((s, p, j) => {
                const k = r.packets[`p${j}`]!.locked;
                expect(Number.isInteger(k) && k >= 0 && k <= p.qty).toBe(true);
                return s + k * p.lines.filter((l) => l.id === id).reduce((n, l) => n + l.micro, 0);
              }, 0);
              expect(x.live(wh, id, c.user) - own[i]!).toBe(expected);
            });
          } else if (c.op === 'release') x.service.releaseLocks(actor, wh, c.ids);
          else if (c.op === 'tick') x.tick(c.ms);
          else x.service.sweepExpiredLocks();
        } catch (err) {
          if (!(err instanceof AppError)) throw err;
          expect([409]).toContain(err.status);
          if (err.codes[0]!.code === 'insufficientStock' && c.op === 'doc') {
            // Refused for a reason: some item asked for more than the stock minus other users' live locks.
            const short = err.codes.map((code) => code.args[0]!);
            for (const id of short) {
              const wanted = c.lines.filter((l) => l.id === id).reduce((n, l) => n + l.micro, 0);
              expect(wanted).toBeGreaterThan(x.qty(wh, id) - (x.live(wh, id) - x.live(wh, id, c.user)));
            }
          }
          expect(x.snapshot()).toBe(before); // atomic: a refused command wrote nothing
        }
        // Invariants after every command.
        expect(x.service.checkLedger().differences).toEqual([]);
        for (const wid of W) {
          for (const id of ITEMS) {
            const q = x.qty(wid, id);
            expect(q).toBe(model.get(key(wid, id)) ?? 0);
            expect(q).toBeGreaterThanOrEqual(0);
            const locked = x.live(wid, id);
            expect(locked).toBeGreaterThanOrEqual(0);
            expect(locked).toBeLessThanOrEqual(q);
          }
        }
      }
      x.db.close();
    }),
    { numRuns: 400 },
  );
}, 60_000);
