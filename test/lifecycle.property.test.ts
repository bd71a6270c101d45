import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, expect, test } from 'vitest';
import demo from '../native-config/demo.json';
import { migrate } from '../src/db/migrate.js';
import { claimHeld } from './support/lifecycle.js';
import { type Db, openDatabase } from '../src/db/open.js';
import type { Principal } from '../src/http/types.js';
import { createLogger } from '../src/log.js';
import {
  createSoldOutFlags as createProductLocks,
  type SoldOutFlags as ProductLocks,
} from '../src/modules/menus/sold-out.js';
import { createOutbox } from '../src/modules/sync/up/outbox.js';
import { createSyncRepo } from '../src/modules/sync/repo.js';
import { createMenuRepo } from '../src/modules/menus/repo.js';
import { createMenuService } from '../src/modules/menus/service.js';
import { createCommandQueue, type CommandQueue } from '../src/modules/ordering/command-queue.js';
import { noWalSync } from '../src/db/wal-sync.js';
import { createPublisher } from '../src/modules/events/publisher.js';
import type { Order } from '../src/modules/ordering/order-view.js';
import { createPrintJobs } from '../src/modules/ordering/print-jobs.js';
import { createPrintRepo } from '../src/modules/printing/repo.js';
import { createPrintingService } from '../src/modules/printing/service.js';
import { createOrderRepo } from '../src/modules/ordering/repo.js';
import { createOrderHandler } from '../src/modules/ordering/handler.js';
import { createOrderingService, type OrderingService } from '../src/modules/ordering/service.js';
import { createProvisioningRepo } from '../src/modules/provisioning/repo.js';
import { applyProvisioning } from '../src/modules/provisioning/service.js';
import { createVenueRepo } from '../src/modules/venues/repo.js';
import { parseMoney } from '../src/shared/money.js';
import { createEventStore } from '../src/modules/events/event-store.js';

/*
 * Random command sequences against the ordering service and its durable queue, on a temp-file database.
 * After every command the order must be in a state of the lifecycle table (docs/orders.md "The order lifecycle"), an applied command
 * must be a transition of that table, a rejected one must change nothing, and total + editTotal must equal
 * the value of the lines that are not CANCELLED. The table below is written out again on purpose, from the
 * table of docs/orders.md, rather than imported from the commands.
 */

const T = demo.tenants[0]!.id;
const VENUE = demo.tenants[0]!.venues[0]!.id;
const MENU = demo.tenants[0]!.menus[0]!.id;
const TYPES = ['DELIVERY', 'TAKE_AWAY', 'DINE_IN_OPEN', 'DINE_IN'] as const;
type OrderType = (typeof TYPES)[number];
const STRANGER_LINE = '66666666-6666-4666-8666-666666666666';

type Who = 'customer' | 'staff';
type Cmd =
  | { op: 'append'; who: Who; lines: { productId: string; quantity: number }[] }
  | { op: 'update'; who: Who; picks: number[]; quantity: number }
  | { op: 'remove'; who: Who; picks: number[] }
  | { op: 'submit' | 'ready' | 'cancel'; who: Who }
  | { op: 'complete'; who: Who; rightCode: boolean }
  | { op: 'lock'; productId: string; locked: boolean };

// Weighted towards commands that can apply, so sequences get past NEW: mostly valid products, staff giving
// the staff commands, the right claim code; customers still try them, and cancels stay rare.
const who = fc.constantFrom<Who>('customer', 'staff');
const staffMostly = fc.constantFrom<Who>('staff', 'staff', 'staff', 'customer');
const product = fc.oneof(
  // woda and kompot are sold everywhere, piwo only for DINE_IN, kawior is not on the menu.
  { weight: 8, arbitrary: fc.constantFrom('woda', 'kompot', 'schabowy') },
  { weight: 1, arbitrary: fc.constantFrom('piwo', 'kawior') },
);
const lineInput = fc.record({ productId: product, quantity: fc.integer({ min: 1, max: 4 }) });
const picks = fc.array(fc.integer({ min: 0, max: 5 }), { minLength: 1, maxLength: 3 });
const cmdArb: fc.Arbitrary<Cmd> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      op: fc.constant('append' as const),
      who,
      lines: fc.array(lineInput, { minLength: 1, maxLength: 3 }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({ op: fc.constant('update' as const), who, picks, quantity: fc.integer({ min: 1, max: 5 }) }),
  },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('remove' as const), who, picks }) },
  { weight: 4, arbitrary: fc.record({ op: fc.constant('submit' as const), who }) },
  { weight: 3, arbitrary: fc.record({ op: fc.constant('ready' as const), who: staffMostly }) },
  {
    weight: 2,
    arbitrary: fc.record({
      op: fc.constant('complete' as const),
      who: staffMostly,
      rightCode: fc.constantFrom(true, true, true, false),
    }),
  },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('cancel' as const), who }) },
  {
    weight: 1,
    arbitrary: fc.record({
      op: fc.constant('lock' as const),
      productId: fc.constantFrom('woda', 'kompot'),
      locked: fc.boolean(),
    }),
  },
);
const scenario = fc.record({
  type: fc.constantFrom<OrderType>('DELIVERY', 'TAKE_AWAY', 'DINE_IN_OPEN', 'DINE_IN_OPEN', 'DINE_IN'),
  initial: fc.array(lineInput, { maxLength: 3 }),
  cmds: fc.array(cmdArb, { minLength: 1, maxLength: 30 }),
});

/** The lifecycle table: for an applied command, the status it may start from and the one it leads to. */
function expectedNext(type: OrderType, from: string, op: string): string | undefined {
  const tab = type === 'DINE_IN_OPEN';
  switch (op) {
    case 'append':
    case 'update':
    case 'remove':
      return from === 'NEW' || (tab && (from === 'ORDERED' || from === 'READY')) ? from : undefined;
    case 'submit':
      return from === 'NEW' || from === 'ORDERED' || (tab && from === 'READY') ? 'ORDERED' : undefined;
    case 'ready':
      return from === 'ORDERED' ? 'READY' : undefined;
    case 'complete':
      return from === 'ORDERED' || from === 'READY' ? 'COMPLETED' : undefined;
    case 'cancel':
      return from === 'NEW' || from === 'ORDERED' || from === 'READY' ? 'CANCELLED' : undefined;
    default:
      return undefined;
  }
}

const lines = (o: Order) => o.buckets.flatMap((b) => b.lines);
const value = (ls: { price: string; quantity: number }[]) =>
  ls.reduce((s, l) => s + parseMoney(l.price) * l.quantity, 0);

function checkState(db: Db, o: Order): void {
  const ls = lines(o);
  expect(['NEW', 'ORDERED', 'READY', 'COMPLETED', 'CANCELLED']).toContain(o.status);
  for (const l of ls) expect(['NEW', 'ORDERED', 'CANCELLED']).toContain(l.status);
  const count = (s: string) => ls.filter((l) => l.status === s).length;
  expect(o.closed).toBe(o.status === 'COMPLETED' || o.status === 'CANCELLED');
  expect(o.completed).toBe(o.status === 'COMPLETED');
  switch (o.status) {
    case 'NEW':
      expect(count('ORDERED') + count('CANCELLED')).toBe(0);
      break;
    case 'ORDERED':
    case 'READY':
      expect(count('ORDERED')).toBeGreaterThan(0);
      expect(count('CANCELLED')).toBe(0);
      if (o.orderType !== 'DINE_IN_OPEN') expect(count('NEW')).toBe(0);
      break;
    case 'COMPLETED':
      expect(count('ORDERED')).toBeGreaterThan(0);
      expect(count('NEW')).toBe(0);
      break;
    case 'CANCELLED':
      expect(count('CANCELLED')).toBe(ls.length);
      break;
  }
  const live = ls.filter((l) => l.status !== 'CANCELLED');
  expect(parseMoney(o.total) + parseMoney(o.editTotal)).toBe(value(live));
  expect(parseMoney(o.editTotal)).toBe(value(ls.filter((l) => l.status === 'NEW')));
  // The claim code is held (in the index of open orders' codes) exactly while the order is open.
  expect(claimHeld(db, T, o.claimCode, o.id)).toBe(o.closed ? 0 : 1);
}

let dir: string;
let db: Db;
let ordering: OrderingService;
let queue: CommandQueue;
let locks: ProductLocks;
let clock = Date.UTC(2025, 5, 4, 10, 0, 0);

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'vb-prop-'));
  db = openDatabase(join(dir, 'venue-box.db'));
  db.pragma('synchronous = OFF'); // a throwaway database: durability is tested elsewhere
  migrate(db);
  applyProvisioning(createProvisioningRepo(db), 'demo', demo);
  const venues = createVenueRepo(db);
  const menuRepo = createMenuRepo(db);
  const outbox = createOutbox(createSyncRepo(db));
  locks = createProductLocks(db, menuRepo, venues, outbox);
  const repo = createOrderRepo(db);
  const now = () => clock;
  const printing = createPrintingService({ repo: createPrintRepo(db), printers: [], now });
  const orderDeps = {
    repo,
    venues,
    menus: createMenuService(menuRepo, venues, locks),
    soldOut: locks,
    printJobs: createPrintJobs(printing),
    events: createEventStore(db),
    outbox,
    source: 'property',
    now,
  };
  const publisher = createPublisher(noWalSync, { hold: () => {}, push: () => {} });
  queue = createCommandQueue({
    repo,
    handler: createOrderHandler(orderDeps),
    publisher,
    log: createLogger('silent'),
    now,
  });
  ordering = createOrderingService({ ...orderDeps, queue });
});
afterAll(() => {
  queue.stop();
  db.close();
  rmSync(dir, { recursive: true, force: true });
});

const principal = (userId: string, staff: boolean): Principal => ({
  tenantId: T,
  userId,
  scope: staff ? ['read', 'write'] : ['read'],
  staff,
  expMs: clock + 3_600_000,
  jti: 'p',
});
const lastOutcome = (): string =>
  (db.prepare('SELECT outcome FROM order_commands ORDER BY seq DESC LIMIT 1').get() as { outcome: string }).outcome;
const jobs = (orderId: string) =>
  db
    .prepare('SELECT kind, round FROM print_jobs WHERE tenant_id = ? AND order_id = ? ORDER BY rowid')
    .all(T, orderId) as { kind: string; round: number }[];

test('random command sequences stay inside the lifecycle table and keep total + editTotal = live lines', async () => {
  let n = 0;
  await fc.assert(
    fc.asyncProperty(scenario, async ({ type, initial, cmds }) => {
      n++;
      const customer = principal(`00000000-0000-4000-8000-${String(n).padStart(12, '0')}`, false);
      const staff = principal('00000000-0000-4000-9000-000000000001', true);
      for (const p of ['woda', 'kompot']) locks.set(T, MENU, { venue: VENUE, productId: p, locked: false }, clock);
      const run = async (fn: () => Promise<unknown>) => {
        await fn();
        queue.drain();
        clock += 1000;
      };
      const created = await ordering.newOrder(customer, {
        orderType: type,
        buckets: [{ venue: VENUE, lines: initial }],
      });
      queue.drain();
      const read = (): Order | undefined => {
        try {
          return ordering.getOrder(staff, created.orderId);
        } catch {
          return undefined;
        }
      };
      let order = read();
      if (!order) return; // an unknown or channel-restricted product refused the whole order: nothing to follow
      checkState(db, order);
      let rounds = 0;
      let cancelledWithKitchen = false;
      const soldOut = new Set<string>();

      for (const cmd of cmds) {
        if (cmd.op === 'lock') {
          locks.set(T, MENU, { venue: VENUE, productId: cmd.productId, locked: cmd.locked }, clock);
          if (cmd.locked) soldOut.add(cmd.productId);
          else soldOut.delete(cmd.productId);
          continue;
        }
        const actor = cmd.who === 'staff' ? staff : customer;
        const ids = lines(order).map((l) => l.id);
        const pick = (i: number) => ids[i] ?? STRANGER_LINE;
        const id = created.orderId;
        const before = order;
        switch (cmd.op) {
          case 'append':
            await run(() => ordering.append(actor, id, { venue: VENUE, lines: cmd.lines }));
            break;
          case 'update':
            await run(() =>
              ordering.update(actor, id, {
                venue: VENUE,
                lines: [...new Set(cmd.picks.map(pick))].map((lineId) => ({ id: lineId, quantity: cmd.quantity })),
              }),
            );
            break;
          case 'remove':
            await run(() => ordering.remove(actor, id, { venue: VENUE, lines: [...new Set(cmd.picks.map(pick))] }));
            break;
          case 'submit':
            await run(() => ordering.submit(actor, id));
            break;
          case 'ready':
            await run(() => ordering.ready(actor, id));
            break;
          case 'cancel':
            await run(() => ordering.cancel(actor, id, {}));
            break;
          case 'complete':
            await run(() =>
              ordering.complete(actor, id, {
                claimCode: cmd.rightCode ? before.claimCode : before.claimCode === '999999' ? '000000' : '999999',
              }),
            );
            break;
        }
        order = read()!;
        checkState(db, order);
        const outcome = lastOutcome();
        expect(outcome, `${cmd.op} failed with an internal error`).not.toBe('failed');
        const applied = outcome === 'applied';
        if (!applied) {
          expect(order, `${cmd.op} was rejected yet changed the order`).toEqual(before);
          continue;
        }
        expect(expectedNext(type, before.status, cmd.op), `${before.status} --${cmd.op}--> ${order.status}`).toBe(
          order.status,
        );
        if (cmd.op === 'ready' || cmd.op === 'complete') expect(actor.staff).toBe(true);
        if (cmd.op === 'complete') expect(cmd.rightCode).toBe(true);
        if (cmd.op === 'cancel' && lines(before).some((l) => l.status === 'ORDERED')) {
          expect(actor.staff).toBe(true);
          cancelledWithKitchen = true;
        }
        // Nothing sold out gets into the basket or to the kitchen.
        if (cmd.op === 'append') expect(cmd.lines.filter((l) => soldOut.has(l.productId))).toEqual([]);
        if (cmd.op === 'submit') {
          expect(lines(before).filter((l) => l.status === 'NEW' && soldOut.has(l.productId))).toEqual([]);
          rounds++;
          expect(parseMoney(order.total)).toBe(parseMoney(before.total) + parseMoney(before.editTotal));
          expect(order.editTotal).toBe('0.00');
        }
      }
      // Print jobs: one kitchen ticket a round, a claim slip with the first, a cancel slip if the kitchen had lines.
      const kinds = jobs(created.orderId);
      expect(kinds.filter((j) => j.kind === 'kitchen').map((j) => j.round)).toEqual(
        Array.from({ length: rounds }, (_, i) => i + 1),
      );
      expect(kinds.filter((j) => j.kind === 'claim').length).toBe(rounds > 0 ? 1 : 0);
      expect(kinds.filter((j) => j.kind === 'cancel').length).toBe(cancelledWithKitchen ? 1 : 0);
    }),
    { numRuns: 300 },
  );
});

test('the happy path applies every step: submit, a staff ready, complete with the right claim code', async () => {
  // Deterministic companion to the property: the happy path never gets refused.
  for (const p of ['woda', 'kompot']) locks.set(T, MENU, { venue: VENUE, productId: p, locked: false }, clock);
  const customer = principal('00000000-0000-4000-8000-ffffffffffff', false);
  const staff = principal('00000000-0000-4000-9000-000000000001', true);
  const c = await ordering.newOrder(customer, {
    orderType: 'TAKE_AWAY',
    buckets: [{ venue: VENUE, lines: [{ productId: 'woda', quantity: 1 }] }],
  });
  queue.drain();
  for (const step of [
    () => ordering.submit(customer, c.orderId),
    () => ordering.ready(staff, c.orderId),
    () => ordering.complete(staff, c.orderId, { claimCode: ordering.getOrder(staff, c.orderId).claimCode }),
  ]) {
    await step();
    queue.drain();
    expect(lastOutcome()).toBe('applied');
  }
  expect(ordering.getOrder(customer, c.orderId)).toMatchObject({ status: 'COMPLETED', total: '6.00' });
});
