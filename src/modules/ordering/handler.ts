import { reject } from '../../shared/errors.js';
import { notification, orderChange } from '../../shared/socket-protocol.js';
import { isoOf } from '../../shared/clock.js';
import type { createRateLimiter } from '../../shared/token-bucket.js';
import { type EventStore, type OutgoingFrame, venueStream } from '../events/event-store.js';
import type { Outbox } from '../sync/up/outbox.js';
import type { VenueRepo } from '../venues/repo.js';
import type { CommandHandler } from './command-queue.js';
import { commandOf } from './commands/registry.js';
import type { CommandDeps } from './commands/rules.js';
import { orderView, type OrderRows, syncDetail, withoutContact } from './order-view.js';
import type { Command } from './repo.js';
import type { WriteBudget } from './write-budget.js';

/**
 * The rate of commands a customer (a token without scope write) may give: a token bucket per user. Every applied
 * command writes the whole order again (two socket events, the sync outbox), so one customer changing a large
 * order as fast as the box answers could otherwise write megabytes a second. Staff devices are not limited.
 */
export interface CommandRate {
  burst: number;
  refillSeconds: number;
}

/**
 * A customer's command costs one more in its command rate per ORDER_WRITE_UNIT bytes of the order it wrote beyond
 * the first ORDER_WRITE_FREE (about 18 lines): a typical order costs 1 a command, a 400-line one about 40.
 */
export const ORDER_WRITE_FREE = 8192;
export const ORDER_WRITE_UNIT = 4096;

export interface HandlerDeps extends CommandDeps {
  /** The customers' command rate (createRateLimiter(CommandRate)), shared with the service; absent: no limit. */
  customerRate?: ReturnType<typeof createRateLimiter>;
  /** The bytes customers' commands may store per address and per venue, shared with the service; absent: none. */
  writeBudget?: WriteBudget;
  events: EventStore;
  /** Every applied command's order goes to the central through the outbox, in the command's savepoint. */
  outbox: Outbox;
  venues: VenueRepo;
  now(): number;
}

export const rateKey = (tenantId: string, userId: string): string => `${tenantId}\n${userId}`;

/**
 * The order.changed event of an applied command: the order as it now is, and the command that changed it. Returns
 * the event's length, what it stores in the outbox.
 */
export function recordForSync(
  deps: HandlerDeps,
  cmd: Pick<Command, 'tenantId' | 'orderId' | 'correlationId' | 'kind' | 'userId' | 'staff' | 'confirmedMs'>,
  rows: OrderRows,
  orderJson: string,
  now: number,
): number {
  const version = deps.repo.bumpVersion(cmd.tenantId, cmd.orderId);
  const command = {
    correlationId: cmd.correlationId,
    kind: cmd.kind,
    userId: cmd.userId,
    staff: cmd.staff,
    confirmedAt: isoOf(cmd.confirmedMs),
  };
  const detail = syncDetail(rows);
  const json = `{"version":${version},"command":${JSON.stringify(command)},"order":${orderJson},"detail":${JSON.stringify(detail)}}`;
  deps.outbox.append(cmd.tenantId, 'order.changed', cmd.orderId, { json }, now);
  return json.length;
}

/**
 * Applies queued commands (src/modules/ordering/command-queue.ts): made before the queue, and the ordering service
 * after it, so neither waits for the other to exist (docs/architecture.md "Wiring and lifecycle").
 */
export function createOrderHandler(deps: HandlerDeps): CommandHandler {
  const { customerRate, writeBudget } = deps;
  return {
    process(cmd, now) {
      const command = commandOf(cmd.kind);
      if (!command) throw reject('invalidCommand', `unknown command ${cmd.kind}`, [cmd.kind]);
      command.apply(deps, cmd, cmd.body, now);
      // The order as the command left it (in memory: src/modules/ordering/order-store.ts): the pushed view and the
      // sync detail both come from these rows.
      const rows = deps.repo.rows(cmd.tenantId, cmd.orderId)!;
      const order = orderView(deps.venues, cmd.tenantId, rows);
      const payload = JSON.stringify(order);
      const synced = recordForSync(
        deps,
        cmd,
        rows,
        order.contact ? JSON.stringify(withoutContact(order)) : payload,
        now,
      );
      // Every applied command stores the whole order again (socket streams, sync outbox): a customer's command
      // pays for a large order (docs/orders.md "Order limits"), so a huge order cannot be rewritten many times a second.
      if (customerRate && !cmd.staff && payload.length > ORDER_WRITE_FREE) {
        customerRate.charge(
          rateKey(cmd.tenantId, cmd.userId),
          Math.floor((payload.length - ORDER_WRITE_FREE) / ORDER_WRITE_UNIT),
        );
      }
      // The order's users, the commanding user (staff acting on a customer's order hear their answer too),
      // and the stream of every venue of the order (staff sockets, `?venue=V`).
      const streams = new Set(order.users.map((u) => u.userId));
      streams.add(cmd.userId);
      for (const b of order.buckets) streams.add(venueStream(b.venue));
      // What the command stored: the order once a stream (socket events) and once in the outbox.
      writeBudget?.charge(cmd.correlationId, cmd.tenantId, cmd.orderId, payload.length * streams.size + synced);
      const change = orderChange(payload);
      return [...streams].map((stream) => deps.events.append(cmd.tenantId, stream, change, now));
    },
    notify(cmd, codes, now): OutgoingFrame[] {
      const frame = notification(cmd, codes);
      writeBudget?.refused(cmd.correlationId, frame.payloadJson.length);
      return [deps.events.append(cmd.tenantId, cmd.userId, frame, now)];
    },
  };
}
