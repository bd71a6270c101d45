import type { Principal } from '../../http/types.js';
import { type ErrorDetail, invalidField, notFound, reject } from '../../shared/errors.js';
import { newId } from '../../shared/ids.js';
import type { EventStore, OutgoingFrame } from '../../ws/event-store.js';
import type { VenueRepo } from '../venues/repo.js';
import type { CommandHandler, CommandQueue } from './command-queue.js';
import { applyAppend, applyNew, type CommandDeps, type StoredLine, type StoredNew } from './commands.js';
import { buildOrder, type Order } from './order-view.js';
import type { CommandRecord, OrderRepo } from './repo.js';
import type { AppendBody, LineInput, NewOrderBody } from './schemas.js';

export interface Confirmation {
  correlationId: string;
  orderId: string;
  lines: string[];
}

type Apply = (deps: CommandDeps, cmd: CommandRecord, now: number) => void;
const APPLY: Record<string, Apply> = { new: applyNew, append: applyAppend };

export interface OrderingDeps extends CommandDeps {
  events: EventStore;
  venues: VenueRepo;
  now(): number;
}

/** Ordering use cases: confirm commands (durably), apply them later, read orders. */
export function createOrderingService(deps: OrderingDeps) {
  let queue: CommandQueue | undefined;
  const withIds = (lines: LineInput[] = []): StoredLine[] =>
    lines.map((l) => ({ id: newId(), productId: l.productId, quantity: l.quantity }));

  async function confirm(p: Principal, orderId: string, kind: string, body: unknown, lines: string[]): Promise<Confirmation> {
    const correlationId = newId();
    await queue!.confirm({
      correlationId, tenantId: p.tenantId, userId: p.userId, staff: p.staff, orderId, kind, body,
      confirmedMs: deps.now(),
    });
    return { correlationId, orderId, lines };
  }

  const handler: CommandHandler = {
    process(cmd, now) {
      const apply = APPLY[cmd.kind];
      if (!apply) throw reject('invalidCommand', `unknown command ${cmd.kind}`, [cmd.kind]);
      apply(deps, cmd, now);
      const order = buildOrder(deps.repo, deps.venues, cmd.tenantId, cmd.orderId)!;
      const payload = JSON.stringify(order);
      return order.users.map((u) => deps.events.append(cmd.tenantId, u.userId, 'ORDER_CHANGE', payload, now));
    },
    notify(cmd, codes: ErrorDetail[], now): OutgoingFrame[] {
      const payload = JSON.stringify({
        type: 'OrderEventError',
        users: [cmd.userId],
        orderId: cmd.orderId,
        event: { correlationId: cmd.correlationId, user: cmd.userId, orderId: cmd.orderId },
        message: codes.map((c) => c.message).join('; '),
        codes,
      });
      return [deps.events.append(cmd.tenantId, cmd.userId, 'NOTIFICATION', payload, now)];
    },
  };

  return {
    handler,
    attachQueue(q: CommandQueue): void {
      queue = q;
    },

    newOrder(p: Principal, body: NewOrderBody): Promise<Confirmation> {
      const venues = body.buckets.map((b) => b.venue);
      const dup = venues.findIndex((v, i) => venues.indexOf(v) !== i);
      if (dup >= 0) throw invalidField(`/buckets/${dup}/venue`, 'each venue may have only one bucket');
      const stored: StoredNew = {
        orderType: body.orderType,
        buckets: body.buckets.map((b) => ({ venue: b.venue, lines: withIds(b.lines) })),
        ...(body.contact ? { contact: body.contact as Record<string, string> } : {}),
        ...(body.extra ? { extra: body.extra } : {}),
      };
      const lineIds = stored.buckets.flatMap((b) => b.lines.map((l) => l.id));
      return confirm(p, newId(), 'new', stored, lineIds);
    },

    append(p: Principal, orderId: string, body: AppendBody): Promise<Confirmation> {
      const lines = withIds(body.lines);
      return confirm(p, orderId, 'append', { venue: body.venue, lines }, lines.map((l) => l.id));
    },

    /** The current order, to the users it lists (and staff of the tenant); 404 to anyone else. */
    getOrder(p: Principal, orderId: string): Order {
      const order = buildOrder(deps.repo, deps.venues, p.tenantId, orderId);
      if (!order || !(p.staff || order.users.some((u) => u.userId === p.userId))) throw notFound('order');
      return order;
    },
  };
}
export type OrderingService = ReturnType<typeof createOrderingService>;
