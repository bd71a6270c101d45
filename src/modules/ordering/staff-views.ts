import { invalidField } from '../../shared/errors.js';
import { isUuid } from '../../shared/ids.js';
import type { Order } from './order-view.js';
import type { OrderFilter } from './repo.js';
import type { OrderStatus } from './schemas.js';

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
 * `GET /ordering-api/api/orders?venue=&status=&since=&limit=&cursor=`, its query already checked by its schema
 * (OrderListQuery in routes.ts: `venue` a venue id, `status` statuses, `since` an ISO 8601 timestamp, `limit`
 * 1..200): the filter, `since` as a time and the cursor decoded (both still refused here when they name none).
 */
export function orderFilterOf(query: {
  venue?: string;
  status?: OrderStatus[];
  since?: string;
  limit?: number;
  cursor?: string;
}): OrderFilter {
  const filter: OrderFilter = { limit: query.limit ?? DEFAULT_PAGE };
  if (query.venue !== undefined) filter.venue = query.venue;
  if (query.status !== undefined) filter.statuses = [...new Set(query.status)];
  if (query.since !== undefined) {
    const ms = Date.parse(query.since);
    if (!Number.isFinite(ms)) throw invalidField('since', 'since must be an ISO 8601 timestamp');
    filter.changedSinceMs = ms;
  }
  if (query.cursor !== undefined) filter.after = decodeCursor(query.cursor);
  return filter;
}
