import type { Principal } from '../../http/types.js';
import { insufficientScope, notFound, retryLater } from '../../shared/errors.js';
import { isUuid, newId7 } from '../../shared/ids.js';
import type { OrderChangedBody } from '../../shared/sync-messages.js';
import type { CommandQueue } from './command-queue.js';
import type { Static } from '@sinclair/typebox';
import { type CommandName, ORDER_COMMANDS } from './commands/registry.js';
import { type HandlerDeps, rateKey, recordForSync } from './handler.js';
import { buildOrder, type Order, orderView, withoutContact } from './order-view.js';
import { createIdempotencyGuard, type IdempotencyRequest } from './idempotency.js';
import type { OrderFilter } from './repo.js';
import { reinstateOrder } from './reinstate.js';
import type { AppendBody, CancelBody, CompleteBody, NewOrderBody, RemoveBody, UpdateBody } from './schemas.js';
import { encodeCursor, type OrderPage } from './staff-views.js';
import type { WriteBudget } from './write-budget.js';

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

export interface OrderingDeps extends HandlerDeps {
  /** Where confirmed commands go; its handler is this module's (src/modules/ordering/handler.ts). */
  queue: Pick<CommandQueue, 'confirm'>;
}

/** A socket watching every order of a venue (`?venue=V`): staff only (403), a venue of the tenant (404). */
export function venueWatchGuard(
  venues: Pick<HandlerDeps['venues'], 'getVenue'>,
): (p: Principal, venueId: string) => void {
  return (p, venueId) => {
    if (!isStaff(p)) throw insufficientScope('write', 'only staff (scope write) may watch a venue');
    if (!isUuid(venueId) || !venues.getVenue(p.tenantId, venueId)) throw notFound('venue');
  };
}

/** Ordering use cases: confirm commands (durably), apply them later, read orders. */
export function createOrderingService(deps: OrderingDeps) {
  const { queue, customerRate, writeBudget } = deps;
  const keys = createIdempotencyGuard(deps.repo.idempotency);

  /**
   * Queues a command durably and resolves with its confirmation. With an Idempotency-Key the confirmation is
   * stored as JSON text with the command; a retry gets that one back (for `new`, the original order and line
   * ids, not the fresh ones made for the retry), and it serialises to the same bytes again.
   */
  /**
   * 429 with Retry-After past the customer's command rate, or past the bytes its address or the venue's customers
   * may write (docs/orders.md "Order limits"); the command is not queued and nothing is taken. Returns what the
   * write budget admitted, to hold until the command is applied.
   */
  function admit(
    p: Principal,
    clientAddress: string | undefined,
    orderId: string,
    newLines: number,
  ): ReturnType<WriteBudget['admit']> | undefined {
    if (isStaff(p)) return undefined;
    const key = rateKey(p.tenantId, p.userId);
    const waitMs = customerRate?.waitMs(key) ?? 0;
    if (waitMs > 0) {
      const message = 'too many order commands: retry after Retry-After seconds';
      throw retryLater('tooManyRequests', message, waitMs, ['ordering.customerCommandRate']);
    }
    // An in-process caller names no address: only the customer's own rate holds it.
    const admitted =
      clientAddress === undefined ? undefined : writeBudget?.admit(p.tenantId, clientAddress, orderId, newLines);
    customerRate?.take(key);
    return admitted;
  }

  function confirm(
    p: Principal,
    orderId: string,
    kind: string,
    body: unknown,
    lines: string[],
    idem: IdempotencyRequest | undefined,
    clientAddress: string | undefined,
  ): Promise<Confirmation> {
    // `new` and `append` add their lines (the confirmation's line ids); the others change the lines there are.
    const added = kind === 'new' || kind === 'append' ? lines.length : 0;
    const admitted = admit(p, clientAddress, orderId, added);
    const confirmedMs = deps.now();
    const correlationId = newId7(confirmedMs);
    const confirmation: Confirmation = { correlationId, orderId, lines };
    const record = {
      correlationId,
      tenantId: p.tenantId,
      userId: p.userId,
      staff: isStaff(p),
      orderId,
      kind,
      body,
      confirmedMs,
    };
    // Held only when queued (a retried Idempotency-Key queues nothing), let go if the queueing fails.
    const queued = (stored?: Parameters<typeof queue.confirm>[1]): Promise<void> => {
      if (admitted === undefined || !writeBudget) return queue.confirm(record, stored);
      writeBudget.hold(correlationId, admitted);
      return queue.confirm(record, stored).catch((err: unknown) => {
        writeBudget.release(correlationId);
        throw err;
      });
    };
    if (!idem) return queued().then(() => confirmation);
    const response = JSON.stringify(confirmation);
    const stored = {
      tenantId: p.tenantId,
      userId: p.userId,
      key: idem.key,
      fingerprint: idem.fingerprint,
      correlationId,
      response,
      createdMs: confirmedMs,
    };
    return keys
      .once(p.tenantId, p.userId, idem, () => queued(stored).then(() => response))
      .then((text) => JSON.parse(text) as Confirmation);
  }

  function runCommand<N extends CommandName>(
    name: N,
    p: Principal,
    orderId: string | undefined,
    body: CommandBody<N>,
    idem: IdempotencyRequest | undefined,
    clientAddress?: string,
  ): Promise<Confirmation> {
    const { stored, lines } = (
      ORDER_COMMANDS[name].confirm as (b: CommandBody<N>) => { stored: unknown; lines: string[] }
    )(body);
    return confirm(p, orderId ?? newId7(), name, stored, lines, idem, clientAddress);
  }

  return {
    /**
     * Confirms an order command (docs/api.md "Order commands"): the command's own checks of its body (a 400), then
     * the customer's rate and its address's write budget (a 429), then durably queued; resolves with its
     * confirmation. `orderId` for every command but `new`, which makes one; `clientAddress` the request's (the
     * derived one behind a trusted proxy: src/http/client-address.ts).
     */
    command: runCommand,

    // The commands by name, for in-process callers (the service's own tests drive it directly).
    newOrder: (p: Principal, body: NewOrderBody, idem?: IdempotencyRequest) =>
      runCommand('new', p, undefined, body, idem),
    append: (p: Principal, orderId: string, body: AppendBody, idem?: IdempotencyRequest) =>
      runCommand('append', p, orderId, body, idem),
    update: (p: Principal, orderId: string, body: UpdateBody, idem?: IdempotencyRequest) =>
      runCommand('update', p, orderId, body, idem),
    remove: (p: Principal, orderId: string, body: RemoveBody, idem?: IdempotencyRequest) =>
      runCommand('remove', p, orderId, body, idem),
    submit: (p: Principal, orderId: string, idem?: IdempotencyRequest) => runCommand('submit', p, orderId, {}, idem),
    ready: (p: Principal, orderId: string, idem?: IdempotencyRequest) => runCommand('ready', p, orderId, {}, idem),
    complete: (p: Principal, orderId: string, body: CompleteBody, idem?: IdempotencyRequest) =>
      runCommand('complete', p, orderId, body, idem),
    cancel: (p: Principal, orderId: string, body: CancelBody, idem?: IdempotencyRequest) =>
      runCommand('cancel', p, orderId, body, idem),

    /**
     * Once, on the first start with sync: every order the box held before gets one order.changed event with its
     * current state (command kind "backfill"), so headquarters sees the history too. Returns how many.
     */
    backfillSync(now: number): number {
      const all = deps.repo.allOrders();
      for (const { tenantId, id } of all) {
        const rows = deps.repo.rows(tenantId, id)!;
        const order = orderView(deps.venues, tenantId, rows);
        recordForSync(
          deps,
          {
            tenantId,
            orderId: id,
            correlationId: '',
            kind: 'backfill',
            userId: '',
            staff: false,
            confirmedMs: Date.parse(order.lastChanged),
          },
          rows,
          JSON.stringify(withoutContact(order)),
          now,
        );
      }
      return all.length;
    },

    /**
     * Whether any order (open or closed) lists the user: such a user keeps its refresh tokens for the full
     * lifetime, to follow its order; the auth module's sweep asks this (wired in src/jobs.ts).
     */
    userHasOrder: (tenantId: string, userId: string): boolean => deps.repo.userHasOrder(tenantId, userId),

    /** Removes Idempotency-Keys stored before `beforeMs` (the retention job); returns how many. */
    pruneIdempotencyKeys: (beforeMs: number): number => deps.repo.idempotency.prune(beforeMs),

    /** Puts an order back from the central's copy (src/modules/ordering/reinstate.ts). */
    reinstateOrder: (tenantId: string, body: OrderChangedBody): void => reinstateOrder(deps.repo, tenantId, body),

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
  };
}
export type OrderingService = ReturnType<typeof createOrderingService>;
