import { checkOrderSize } from '../bounds.js';
import { AppendBody, type OrderType } from '../schemas.js';
import { defineCommand, withIds } from './define.js';
import {
  boundsOf,
  type Lifecycle,
  openVenue,
  orderFor,
  priceLines,
  recomputeTotals,
  requireBucket,
  type StoredLine,
} from './rules.js';

export interface StoredAppend {
  venue: string;
  lines: StoredLine[];
}

const lifecycle: Lifecycle = { allowedIn: ['NEW'], tabAlsoIn: ['ORDERED', 'READY'] };

/** `append`: NEW lines into one venue's bucket; the 200 names the new lines. */
export const appendCommand = defineCommand({
  summary: "Add NEW lines to one venue's bucket",
  lifecycle,
  body: AppendBody,
  bodyRequired: true,
  confirm(body) {
    const lines = withIds(body.lines);
    return { stored: { venue: body.venue, lines } satisfies StoredAppend, lines: lines.map((l) => l.id) };
  },
  /** Business rules of `append`: the order is the user's and open, the venue is one of its buckets and open. */
  apply(deps, cmd, body: StoredAppend, now) {
    const order = orderFor(deps, cmd, lifecycle);
    requireBucket(deps.repo, cmd, body.venue);
    const type = order.order_type as OrderType;
    const venue = openVenue(deps, cmd.tenantId, body.venue, type, now);
    const added = priceLines(deps, cmd, venue, type, body.lines, now);
    checkOrderSize(cmd.orderId, [...deps.repo.lines(cmd.tenantId, cmd.orderId), ...added], boundsOf(deps));
    for (const line of added) deps.repo.insertLine(cmd.tenantId, cmd.orderId, line);
    recomputeTotals(deps.repo, cmd.tenantId, cmd.orderId, now);
  },
});
