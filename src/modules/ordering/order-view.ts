import { isoOf } from '../../shared/clock.js';
import { formatMoney } from '../../shared/money.js';
import type { VenueRepo } from '../venues/repo.js';
import type { OrderRepo, OrderRows } from './repo.js';
import { channelOf, type OrderType } from './schemas.js';
import { createHash } from 'node:crypto';
import type { Order } from '../../shared/order-schemas.js';

/**
 * The Order (docs/orders.md "The order lifecycle"), as pushed over the socket and served by GET order/{id}: its schema is
 * src/shared/order-schemas.ts. `contact`, the one sent with `new` (a delivery's phone), is only on orders that
 * have one. Every Order goes to the order's own users or to staff (REST, their sockets, venue sockets), never
 * elsewhere; the copy sent to the central leaves it out (withoutContact): the sync detail carries it there.
 */
export type { Order, OrderRows };
type Bucket = Order['buckets'][number];

/** The Order without `contact`, for the sync outbox (whose detail carries the contact already). */
export const withoutContact = ({ contact: _contact, ...order }: Order): Order => order;

/** A short digest of what a line is, so clients can tell when a line's content changed. */
export const lineHash = (productId: string, quantity: number, priceMinor: number, status: string): string =>
  createHash('sha256').update(`${productId}\0${quantity}\0${priceMinor}\0${status}`).digest('hex').slice(0, 16);

export function buildOrder(repo: OrderRepo, venues: VenueRepo, tenantId: string, orderId: string): Order | undefined {
  const rows = repo.rows(tenantId, orderId);
  return rows && orderView(venues, tenantId, rows);
}

/** What a restored box needs of an order beyond its Order view: contact, extra, rounds, each line's round. */
export function syncDetail({ row, lines }: OrderRows) {
  const lineRounds: Record<string, number | null> = {};
  for (const l of lines) lineRounds[l.id] = l.round;
  return {
    contact: row.contact_json === null ? null : (JSON.parse(row.contact_json) as Record<string, string>),
    extra: row.extra_json === null ? null : (JSON.parse(row.extra_json) as Record<string, unknown>),
    rounds: row.rounds,
    lineRounds,
  };
}

export function orderView(venues: VenueRepo, tenantId: string, { row, lines, venueIds, users }: OrderRows): Order {
  const channel = channelOf(row.order_type as OrderType);
  const buckets = venueIds.map((venueId): Bucket => {
    const venue = venues.getVenue(tenantId, venueId);
    const constraint = venue?.channelConstraints[channel];
    const [h = '0', m = '0'] = (constraint?.minDeliveryTime ?? '00:00:00').split(':');
    return {
      venue: venueId,
      name: venue?.name ?? '',
      menu: venue?.menu ?? '',
      lines: lines
        .filter((l) => l.venue_id === venueId)
        .map((l) => ({
          id: l.id,
          creator: l.creator,
          created: isoOf(l.created_ms),
          updated: isoOf(l.updated_ms),
          source: row.source,
          quantity: l.quantity,
          price: formatMoney(l.price_minor),
          productId: l.product_id,
          product: JSON.parse(l.product_json) as unknown,
          status: l.status,
          hash: lineHash(l.product_id, l.quantity, l.price_minor, l.status),
          ...(l.note === null ? {} : { extra: { note: l.note } }),
        })),
      extra: {
        minDeliveryMinutes: String(Number(h) * 60 + Number(m)),
        minDeliveryTime: constraint?.minDeliveryTime ?? '00:00:00',
        minOrderValue: constraint?.minOrderValue ?? '0.00',
      },
    };
  });
  return {
    tenant: tenantId,
    id: row.id,
    created: isoOf(row.created_ms),
    lastChanged: isoOf(row.changed_ms),
    source: row.source,
    users,
    orderType: row.order_type,
    total: formatMoney(row.total_minor),
    editTotal: formatMoney(row.edit_total_minor),
    status: row.status,
    claimCode: row.claim_code,
    buckets,
    closed: row.closed === 1,
    completed: row.completed === 1,
    ...(row.contact_json === null ? {} : { contact: JSON.parse(row.contact_json) as Record<string, string> }),
  };
}
