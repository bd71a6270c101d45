import { parseMoney } from '../../shared/money.js';
import type { OrderChangedBody } from '../../shared/sync-messages.js';
import type { Order } from './order-view.js';
import type { OrderRepo } from './repo.js';

/**
 * Puts an order back from the central's copy of its newest order.changed event (a box restored from an old copy
 * of its database): the Order plus the detail it does not show (contact, extra, rounds, each line's round).
 * Call inside the reconcile's transaction; nothing goes to the outbox (the central has it).
 */
export function reinstateOrder(repo: OrderRepo, tenantId: string, body: OrderChangedBody): void {
  const order = body.order as unknown as Order;
  const ms = (iso: string) => Date.parse(iso);
  repo.replaceOrder({
    tenantId,
    id: order.id,
    orderType: order.orderType,
    status: order.status,
    claimCode: order.claimCode,
    totalMinor: parseMoney(order.total),
    editTotalMinor: parseMoney(order.editTotal),
    closed: order.closed ? 1 : 0,
    completed: order.completed ? 1 : 0,
    source: order.source,
    contactJson: body.detail.contact === null ? null : JSON.stringify(body.detail.contact),
    extraJson: body.detail.extra === null ? null : JSON.stringify(body.detail.extra),
    createdMs: ms(order.created),
    changedMs: ms(order.lastChanged),
    rounds: body.detail.rounds,
    version: body.version,
    buckets: order.buckets.map((b) => ({ venueId: b.venue })),
    lines: order.buckets.flatMap((b) =>
      b.lines.map((l) => ({
        id: l.id,
        venueId: b.venue,
        creator: l.creator,
        productId: l.productId,
        quantity: l.quantity,
        priceMinor: parseMoney(l.price),
        status: l.status,
        productJson: JSON.stringify(l.product),
        createdMs: ms(l.created),
        updatedMs: ms(l.updated),
        round: body.detail.lineRounds[l.id] ?? null,
        note: l.extra?.note ?? null,
      })),
    ),
    users: order.users,
  });
}
