import { invalidField } from '../../shared/errors.js';
import { isUuid } from '../../shared/ids.js';
import { limitOf } from '../../shared/validate.js';
import type { Order } from './order-view.js';
import type { OrderFilter } from './repo.js';
import { ORDER_STATUSES } from './schemas.js';

/** A page of the staff list: `next` is the cursor of the following page, null on the last one. */
export interface OrderPage {
  items: Order[];
  next: string | null;
}

export const DEFAULT_PAGE = 50;
export const MAX_PAGE = 200;

/** The cursor is opaque to clients: the (created, id) key of the last order of the page, base64url. */
export const encodeCursor = (key: { createdMs: number; id: string }): string =>
  Buffer.from(JSON.stringify([key.createdMs, key.id])).toString('base64url');

function decodeCursor(text: string): { createdMs: number; id: string } {
  try {
    const value = JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as unknown;
    if (
      Array.isArray(value) &&
      value.length === 2 &&
      Number.isSafeInteger(value[0]) &&
      typeof value[1] === 'string' &&
      isUuid(value[1])
    ) {
      return { createdMs: value[0] as number, id: value[1] };
    }
  } catch {
    // fall through: not one of ours
  }
  throw invalidField('cursor', 'cursor must be the `next` value of a previous page');
}

/**
 * `GET /ordering-api/api/orders?venue=&status=&since=&limit=&cursor=`: `venue` a venue id, `status` one or
 * more statuses separated by commas, `since` an ISO 8601 timestamp (orders whose lastChanged is at or after
 * it), `limit` 1..200 (default 50), `cursor` the `next` of the previous page.
 */
export function parseOrderQuery(query: URLSearchParams): OrderFilter {
  const filter: OrderFilter = { limit: DEFAULT_PAGE };
  const venue = query.get('venue');
  if (venue !== null) {
    if (!isUuid(venue)) throw invalidField('venue', 'venue must be a venue id (UUID)');
    filter.venue = venue;
  }
  const status = query.get('status');
  if (status !== null) {
    const statuses = status.split(',').map((s) => s.trim());
    if (statuses.some((s) => !(ORDER_STATUSES as readonly string[]).includes(s))) {
      throw invalidField('status', `status must be one or more of ${ORDER_STATUSES.join(', ')}, separated by commas`);
    }
    filter.statuses = [...new Set(statuses)];
  }
  const since = query.get('since');
  if (since !== null) {
    const ms = /^\d{4}-\d{2}-\d{2}T/.test(since) ? Date.parse(since) : Number.NaN;
    if (!Number.isFinite(ms)) throw invalidField('since', 'since must be an ISO 8601 timestamp');
    filter.changedSinceMs = ms;
  }
  filter.limit = limitOf(query, DEFAULT_PAGE, MAX_PAGE);
  const cursor = query.get('cursor');
  if (cursor !== null) filter.after = decodeCursor(cursor);
  return filter;
}
