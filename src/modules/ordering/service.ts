import type { Principal } from '../../http/types.js';
import { insufficientScope, notFound, reject, retryLater } from '../../shared/errors.js';
import { notification, orderChange } from '../../shared/socket-protocol.js';
import { createBuckets } from '../../shared/token-bucket.js';
import { isUuid, newId7 } from '../../shared/ids.js';
import { type EventStore, type OutgoingFrame, venueStream } from '../events/event-store.js';
import { isoOf } from '../../shared/clock.js';
import type { OrderChangedBody } from '../../shared/sync-messages.js';
import type { Outbox } from '../sync/outbox.js';
import type { VenueRepo } from '../venues/repo.js';
import type { CommandHandler, CommandQueue } from './command-queue.js';
import type { Static } from '@sinclair/typebox';
import { type CommandName, commandOf, ORDER_COMMANDS } from './commands/registry.js';
import type { CommandDeps } from './commands/rules.js';
import { buildOrder, type Order, orderView, type OrderRows, syncDetail, withoutContact } from './order-view.js';
import { createIdempotencyGuard, type IdempotencyRequest } from './idempotency.js';
import type { Command, OrderFilter, OrderRepo } from './repo.js';
import { restoreOrder } from './restore.js';
import type { AppendBody, CancelBody, CompleteBody, NewOrderBody, RemoveBody, UpdateBody } from './schemas.js';
import { encodeCursor, type OrderPage } from './staff-views.js';

export interface Confirmation {
  correlationId: string;
  orderId: string;
  lines: string[];
}

/** Every kind of order command (the paths under /ordering-api/api/order): the registry's names. */
export const COMMAND_KINDS: readonly string[] = Object.keys(ORDER_COMMANDS);

/** The validated body a command takes (its schema's type). */
export type CommandBody<N extends CommandName> = Static<(typeof ORDER_COMMANDS)[N]['body']>;

/** Staff powers (every order of the tenant, staff commands, venue sockets) need a staff token with scope write. */
export const isStaff = (p: Principal): boolean => p.staff && p.scope.includes('write');

/**
 * The rate of commands a customer (a token without scope write) may give: a token bucket per user. Every applied
 * command writes the whole order again (two socket events, the sync outbox), so one customer changing a large
 * order as fast as the box answers could otherwise write megabytes a second. Staff devices are not limited.
 */
export interface CommandRate {
  burst: number;
  refillSeconds: number;
}

export interface OrderingDeps extends CommandDeps {
  /** Absent: no rate limit (in-process tests that drive the service directly). */
  customerCommandRate?: CommandRate;
  events: EventStore;
  /** Every applied command's order goes to the central through the outbox, in the command's savepoint. */
  outbox: Outbox;
  venues: VenueRepo;
  now(): number;
}

/**
 * A customer's command costs one more in its command rate per ORDER_WRITE_UNIT bytes of the order it wrote beyond
 * the first ORDER_WRITE_FREE (about 18 lines): a typical order costs 1 a command, a 400-line one about 40.
 */
export const ORDER_WRITE_FREE = 8192;
export const ORDER_WRITE_UNIT = 4096;

/** Ordering use cases: confirm commands (durably), apply them later, read orders. */
export function createOrderingService(deps: OrderingDeps) {
  let queue: CommandQueue | undefined;
  const keys = createIdempotencyGuard(deps.repo.idempotency);

  /**
   * Queues a command durably and resolves with its confirmation. With an Idempotency-Key the confirmation is
   * stored as JSON text with the command; a retry gets that one back (for `new`, the original order and line
   * ids, not the fresh ones made for the retry), and it serialises to the same bytes again.
   */
  const customerRate = deps.customerCommandRate ? createBuckets(deps.customerCommandRate, deps.now) : undefined;
  const rateKey = (tenantId: string, userId: string) => `${tenantId}\n${userId}`;
  /** 429 with Retry-After past the customer's command rate; the command is not queued. */
  function checkRate(p: Principal): void {
    if (!customerRate || isStaff(p)) return;
    const key = rateKey(p.tenantId, p.userId);
    const waitMs = customerRate.waitMs(key);
    if (waitMs > 0) {
      const message = 'too many order commands: retry after Retry-After seconds';
      throw retryLater('tooManyRequests', message, waitMs, ['ordering.customerCommandRate']);
    }
    customerRate.take(key);
  }

  function confirm(p: Principal, orderId: string, kind: string, body: unknown, lines: string[],
    idem: IdempotencyRequest | undefined): Promise<Confirmation> {
    checkRate(p);
    const confirmedMs = deps.now();
    const correlationId = newId7(confirmedMs);
    const confirmation: Confirmation = { correlationId, orderId, lines };
    const record = { correlationId, tenantId: p.tenantId, userId: p.userId, staff: isStaff(p), orderId, kind, body, confirmedMs };
    if (!idem) return queue!.confirm(record).then(() => confirmation);
    const response = JSON.stringify(confirmation);
    const stored = { tenantId: p.tenantId, userId: p.userId, key: idem.key, fingerprint: idem.fingerprint, correlationId,
      response, createdMs: confirmedMs };
    return keys.once(p.tenantId, p.userId, idem, () => queue!.confirm(record, stored).then(() => response))
      .then((text) => JSON.parse(text) as Confirmation);
  }

  /** The order.changed event of an applied command: the order as it now is, and the command that changed it. */
  function recordForSync(cmd: Pick<Command, 'tenantId' | 'orderId' | 'correlationId' | 'kind' | 'userId' | 'staff' | 'confirmedMs'>,
    rows: OrderRows, orderJson: string, now: number): void {
    const version = deps.repo.bumpVersion(cmd.tenantId, cmd.orderId);
    const command = {
      correlationId: cmd.correlationId, kind: cmd.kind, userId: cmd.userId, staff: cmd.staff, confirmedAt: isoOf(cmd.confirmedMs),
    };
    const detail = syncDetail(rows);
    const json = `{"version":${version},"command":${JSON.stringify(command)},"order":${orderJson},"detail":${JSON.stringify(detail)}}`;
    deps.outbox.append(cmd.tenantId, 'order.changed', cmd.orderId, { json }, now);
  }

  const handler: CommandHandler = {
    process(cmd, now) {
      const command = commandOf(cmd.kind);
      if (!command) throw reject('invalidCommand', `unknown command ${cmd.kind}`, [cmd.kind]);
      command.apply(deps, cmd, cmd.body, now);
      // The order as the command left it (in memory: src/modules/ordering/order-docs.ts): the pushed view and the
      // sync detail both come from these rows.
      const rows = deps.repo.rows(cmd.tenantId, cmd.orderId)!;
      const order = orderView(deps.venues, cmd.tenantId, rows);
      const payload = JSON.stringify(order);
      recordForSync(cmd, rows, order.contact ? JSON.stringify(withoutContact(order)) : payload, now);
      // Every applied command stores the whole order again (socket streams, sync outbox): a customer's command
      // pays for a large order (docs/orders.md "Order limits"), so a huge order cannot be rewritten many times a second.
      if (customerRate && !cmd.staff && payload.length > ORDER_WRITE_FREE) {
        customerRate.charge(rateKey(cmd.tenantId, cmd.userId), Math.floor((payload.length - ORDER_WRITE_FREE) / ORDER_WRITE_UNIT));
      }
      // The order's users, the commanding user (staff acting on a customer's order hear their answer too),
      // and the stream of every venue of the order (staff sockets, `?venue=V`).
      const streams = new Set(order.users.map((u) => u.userId));
      streams.add(cmd.userId);
      for (const b of order.buckets) streams.add(venueStream(b.venue));
      const change = orderChange(payload);
      return [...streams].map((stream) => deps.events.append(cmd.tenantId, stream, change, now));
    },
    notify(cmd, codes, now): OutgoingFrame[] {
      return [deps.events.append(cmd.tenantId, cmd.userId, notification(cmd, codes), now)];
    },
  };

  function runCommand<N extends CommandName>(name: N, p: Principal, orderId: string | undefined, body: CommandBody<N>,
    idem: IdempotencyRequest | undefined): Promise<Confirmation> {
    const { stored, lines } = (ORDER_COMMANDS[name].confirm as (b: CommandBody<N>) => { stored: unknown; lines: string[] })(body);
    return confirm(p, orderId ?? newId7(), name, stored, lines, idem);
  }

  return {
    handler,
    attachQueue(q: CommandQueue): void {
      queue = q;
    },

    /**
     * Confirms an order command (docs/api.md "Order commands"): the command's own checks of its body (a 400), then
     * the customer's rate (a 429), then durably queued; resolves with its confirmation. `orderId` for every
     * command but `new`, which makes one.
     */
    command: runCommand,

    // The commands by name, for in-process callers (the service's own tests drive it directly).
    newOrder: (p: Principal, body: NewOrderBody, idem?: IdempotencyRequest) => runCommand('new', p, undefined, body, idem),
    append: (p: Principal, orderId: string, body: AppendBody, idem?: IdempotencyRequest) => runCommand('append', p, orderId, body, idem),
    update: (p: Principal, orderId: string, body: UpdateBody, idem?: IdempotencyRequest) => runCommand('update', p, orderId, body, idem),
    remove: (p: Principal, orderId: string, body: RemoveBody, idem?: IdempotencyRequest) => runCommand('remove', p, orderId, body, idem),
    submit: (p: Principal, orderId: string, idem?: IdempotencyRequest) => runCommand('submit', p, orderId, {}, idem),
    ready: (p: Principal, orderId: string, idem?: IdempotencyRequest) => runCommand('ready', p, orderId, {}, idem),
    complete: (p: Principal, orderId: string, body: CompleteBody, idem?: IdempotencyRequest) => runCommand('complete', p, orderId, body, idem),
    cancel: (p: Principal, orderId: string, body: CancelBody, idem?: IdempotencyRequest) => runCommand('cancel', p, orderId, body, idem),

    /**
     * Once, on the first start with sync: every order the box held before gets one order.changed event with its
     * current state (command kind "backfill"), so headquarters sees the history too. Returns how many.
     */
    backfillSync(now: number): number {
      const all = deps.repo.allOrders();
      for (const { tenantId, id } of all) {
        const rows = deps.repo.rows(tenantId, id)!;
        const order = orderView(deps.venues, tenantId, rows);
        recordForSync({ tenantId, orderId: id, correlationId: '', kind: 'backfill', userId: '', staff: false,
          confirmedMs: Date.parse(order.lastChanged) }, rows, JSON.stringify(withoutContact(order)), now);
      }
      return all.length;
    },

    /**
     * Whether any order (open or closed) lists the user: such a user keeps its refresh tokens for the full
     * lifetime, to follow its order; the auth module's sweep asks this (wired in src/box.ts).
     */
    userHasOrder: (tenantId: string, userId: string): boolean => deps.repo.userHasOrder(tenantId, userId),

    /** Removes Idempotency-Keys stored before `beforeMs` (the retention job); returns how many. */
    pruneIdempotencyKeys: (beforeMs: number): number => deps.repo.idempotency.prune(beforeMs),

    /** Puts an order back from the central's copy (src/modules/ordering/restore.ts). */
    restore: (tenantId: string, body: OrderChangedBody): void => restoreOrder(deps.repo, tenantId, body),

    /** The current order, to the users it lists (and staff of the tenant); 404 to anyone else. */
    getOrder(p: Principal, orderId: string): Order {
      const order = buildOrder(deps.repo, deps.venues, p.tenantId, orderId);
      if (!order || !(isStaff(p) || order.users.some((u) => u.userId === p.userId))) throw notFound('order');
      return order;
    },

    /** The staff list: every order of the tenant matching the filter, newest first, one page at a time. */
    listOrders(p: Principal, filter: OrderFilter): OrderPage {
      if (filter.venue !== undefined && !deps.venues.getVenue(p.tenantId, filter.venue)) throw notFound('venue');
      // One row more than the page tells whether there is a next page.
      const rows = deps.repo.listOrders(p.tenantId, { ...filter, limit: filter.limit + 1 });
      const page = rows.slice(0, filter.limit);
      const last = page.at(-1);
      return {
        items: page.map((r) => buildOrder(deps.repo, deps.venues, p.tenantId, r.id)!),
        next: rows.length > filter.limit && last ? encodeCursor({ createdMs: last.created_ms, id: last.id }) : null,
      };
    },

    /** A socket watching every order of a venue (`?venue=V`): staff only (403), a venue of the tenant (404). */
    authorizeVenue(p: Principal, venueId: string): void {
      if (!isStaff(p)) throw insufficientScope('write', 'only staff (scope write) may watch a venue');
      if (!isUuid(venueId) || !deps.venues.getVenue(p.tenantId, venueId)) throw notFound('venue');
    },
  };
}
export type OrderingService = ReturnType<typeof createOrderingService>;
