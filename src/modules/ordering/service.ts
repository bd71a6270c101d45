import type { Principal } from '../../http/types.js';
import { forbidden, insufficientScope, invalidField, notFound, reject, retryLater } from '../../shared/errors.js';
import { notification, orderChange } from '../../shared/socket-protocol.js';
import { createBuckets } from '../../shared/token-bucket.js';
import { isUuid, newId } from '../../shared/ids.js';
import { type EventStore, type OutgoingFrame, venueStream } from '../events/event-store.js';
import { isoOf } from '../../shared/clock.js';
import type { OrderChangedBody } from '../../shared/sync-protocol.js';
import type { Outbox } from '../sync/outbox.js';
import type { VenueRepo } from '../venues/repo.js';
import type { CommandHandler, CommandQueue } from './command-queue.js';
import { applyAppend, applyNew, type CommandDeps, type StoredLine, type StoredNew } from './commands.js';
import {
  applyCancel, applyComplete, applyReady, applyRemove, applySubmit, applyUpdate, type StoredCancel,
  type StoredComplete, type StoredRemove, type StoredUpdate,
} from './lifecycle.js';
import { buildOrder, type Order, withoutContact } from './order-view.js';
import { createIdempotencyGuard, type IdempotencyRequest } from './idempotency.js';
import type { CommandRecord, OrderFilter, OrderRepo } from './repo.js';
import { restoreOrder } from './restore.js';
import type { AppendBody, CancelBody, CompleteBody, LineInput, NewOrderBody, RemoveBody, UpdateBody } from './schemas.js';
import { encodeCursor, type OrderPage } from './staff-views.js';

export interface Confirmation {
  correlationId: string;
  orderId: string;
  lines: string[];
}

type Apply = (deps: CommandDeps, cmd: CommandRecord, now: number) => void;
const APPLY: Record<string, Apply> = {
  new: applyNew, append: applyAppend, update: applyUpdate, remove: applyRemove, submit: applySubmit,
  ready: applyReady, complete: applyComplete, cancel: applyCancel,
};

/** Every kind of order command (the paths under /ordering-api/api/order). */
export const COMMAND_KINDS: readonly string[] = Object.keys(APPLY);

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
  const withIds = (lines: LineInput[] = []): StoredLine[] =>
    lines.map((l) => ({ id: newId(), productId: l.productId, quantity: l.quantity, ...(l.extra?.note ? { note: l.extra.note } : {}) }));

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
    const correlationId = newId();
    const confirmation: Confirmation = { correlationId, orderId, lines };
    const confirmedMs = deps.now();
    const record = { correlationId, tenantId: p.tenantId, userId: p.userId, staff: isStaff(p), orderId, kind, body, confirmedMs };
    if (!idem) return queue!.confirm(record).then(() => confirmation);
    const response = JSON.stringify(confirmation);
    const stored = { tenantId: p.tenantId, userId: p.userId, key: idem.key, fingerprint: idem.fingerprint, correlationId,
      response, createdMs: confirmedMs };
    return keys.once(p.tenantId, p.userId, idem, () => queue!.confirm(record, stored).then(() => response))
      .then((text) => JSON.parse(text) as Confirmation);
  }

  /** The order.changed event of an applied command: the order as it now is, and the command that changed it. */
  function recordForSync(cmd: Pick<CommandRecord, 'tenantId' | 'orderId' | 'correlationId' | 'kind' | 'userId' | 'staff' | 'confirmedMs'>,
    orderJson: string, now: number): void {
    const version = deps.repo.bumpVersion(cmd.tenantId, cmd.orderId);
    const command = {
      correlationId: cmd.correlationId, kind: cmd.kind, userId: cmd.userId, staff: cmd.staff, confirmedAt: isoOf(cmd.confirmedMs),
    };
    const detail = deps.repo.syncDetail(cmd.tenantId, cmd.orderId);
    const json = `{"version":${version},"command":${JSON.stringify(command)},"order":${orderJson},"detail":${JSON.stringify(detail)}}`;
    deps.outbox.append(cmd.tenantId, 'order.changed', cmd.orderId, { json }, now);
  }

  const handler: CommandHandler = {
    process(cmd, now) {
      const apply = APPLY[cmd.kind];
      if (!apply) throw reject('invalidCommand', `unknown command ${cmd.kind}`, [cmd.kind]);
      apply(deps, cmd, now);
      const order = buildOrder(deps.repo, deps.venues, cmd.tenantId, cmd.orderId)!;
      const payload = JSON.stringify(order);
      recordForSync(cmd, order.contact ? JSON.stringify(withoutContact(order)) : payload, now);
      // Every applied command stores the whole order again (socket streams, sync outbox): a customer's command
      // pays for a large order (README "Order limits"), so a huge order cannot be rewritten many times a second.
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

  return {
    handler,
    attachQueue(q: CommandQueue): void {
      queue = q;
    },

    newOrder(p: Principal, body: NewOrderBody, idem?: IdempotencyRequest): Promise<Confirmation> {
      rejectDuplicates(body.buckets.map((b) => b.venue), (i) => `/buckets/${i}/venue`, 'each venue may have only one bucket');
      const stored: StoredNew = {
        orderType: body.orderType,
        buckets: body.buckets.map((b) => ({ venue: b.venue, lines: withIds(b.lines) })),
        ...(body.contact ? { contact: body.contact as Record<string, string> } : {}),
        ...(body.extra ? { extra: body.extra } : {}),
      };
      const lineIds = stored.buckets.flatMap((b) => b.lines.map((l) => l.id));
      return confirm(p, newId(), 'new', stored, lineIds, idem);
    },

    append(p: Principal, orderId: string, body: AppendBody, idem?: IdempotencyRequest): Promise<Confirmation> {
      const lines = withIds(body.lines);
      return confirm(p, orderId, 'append', { venue: body.venue, lines }, lines.map((l) => l.id), idem);
    },

    update(p: Principal, orderId: string, body: UpdateBody, idem?: IdempotencyRequest): Promise<Confirmation> {
      const ids = body.lines.map((l) => l.id);
      rejectDuplicates(ids, (i) => `/lines/${i}/id`, LINE_ONCE);
      const stored: StoredUpdate = { venue: body.venue, lines: body.lines.map((l) => ({ id: l.id, quantity: l.quantity })) };
      return confirm(p, orderId, 'update', stored, ids, idem);
    },

    remove(p: Principal, orderId: string, body: RemoveBody, idem?: IdempotencyRequest): Promise<Confirmation> {
      rejectDuplicates(body.lines, (i) => `/lines/${i}`, LINE_ONCE);
      const stored: StoredRemove = { venue: body.venue, lines: body.lines };
      return confirm(p, orderId, 'remove', stored, body.lines, idem);
    },

    submit: (p: Principal, orderId: string, idem?: IdempotencyRequest): Promise<Confirmation> =>
      confirm(p, orderId, 'submit', {}, [], idem),
    ready: (p: Principal, orderId: string, idem?: IdempotencyRequest): Promise<Confirmation> =>
      confirm(p, orderId, 'ready', {}, [], idem),

    complete(p: Principal, orderId: string, body: CompleteBody, idem?: IdempotencyRequest): Promise<Confirmation> {
      const stored: StoredComplete = { claimCode: body.claimCode };
      return confirm(p, orderId, 'complete', stored, [], idem);
    },

    cancel(p: Principal, orderId: string, body: CancelBody, idem?: IdempotencyRequest): Promise<Confirmation> {
      const stored: StoredCancel = body.reason === undefined ? {} : { reason: body.reason };
      return confirm(p, orderId, 'cancel', stored, [], idem);
    },

    /**
     * Once, on the first start with sync: every order the box held before gets one order.changed event with its
     * current state (command kind "backfill"), so headquarters sees the history too. Returns how many.
     */
    backfillSync(now: number): number {
      const all = deps.repo.allOrders();
      for (const { tenantId, id } of all) {
        const order = buildOrder(deps.repo, deps.venues, tenantId, id)!;
        recordForSync({ tenantId, orderId: id, correlationId: '', kind: 'backfill', userId: '', staff: false,
          confirmedMs: Date.parse(order.lastChanged) }, JSON.stringify(withoutContact(order)), now);
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

const LINE_ONCE = 'each line may be named only once';

/** A 400 naming the first repeat of a value (a venue, a line id) that a body may give only once. */
function rejectDuplicates(values: string[], pointer: (i: number) => string, message: string): void {
  const dup = values.findIndex((v, i) => values.indexOf(v) !== i);
  if (dup >= 0) throw invalidField(pointer(dup), message);
}
