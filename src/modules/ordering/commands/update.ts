import { CommandRejected } from '../../../shared/errors.js';
import { checkOrderSize } from '../bounds.js';
import { UpdateBody } from '../schemas.js';
import { defineCommand, LINE_ONCE, rejectDuplicates } from './define.js';
import {
  boundsOf,
  editableLines,
  type Lifecycle,
  orderFor,
  productUnavailable,
  recomputeTotals,
  requireBucket,
} from './rules.js';

export interface StoredUpdate {
  venue: string;
  lines: { id: string; quantity: number }[];
}

const lifecycle: Lifecycle = { allowedIn: ['NEW'], tabAlsoIn: ['ORDERED', 'READY'] };

/** `update`: new quantities for NEW lines. A sold-out product cannot be changed, only removed. */
export const updateCommand = defineCommand({
  summary: 'Change the quantities of NEW lines',
  lifecycle,
  body: UpdateBody,
  bodyRequired: true,
  confirm(body) {
    const ids = body.lines.map((l) => l.id);
    rejectDuplicates(ids, (i) => `/lines/${i}/id`, LINE_ONCE);
    const stored: StoredUpdate = {
      venue: body.venue,
      lines: body.lines.map((l) => ({ id: l.id, quantity: l.quantity })),
    };
    return { stored, lines: ids };
  },
  apply(deps, cmd, body: StoredUpdate, now) {
    orderFor(deps, cmd, lifecycle);
    requireBucket(deps.repo, cmd, body.venue);
    const lines = editableLines(
      deps,
      cmd,
      body.venue,
      body.lines.map((l) => l.id),
    );
    const soldOut = lines.filter((l) => deps.soldOut.isSoldOut(cmd.tenantId, body.venue, l.product_id));
    if (soldOut.length > 0) {
      const name = deps.venues.getVenue(cmd.tenantId, body.venue)?.name ?? body.venue;
      throw new CommandRejected(soldOut.map((l) => productUnavailable(l.id, l.product_id, name)));
    }
    // Larger quantities can push the order's value past its ceiling. The line count does not change, so it is
    // not checked: an order over a maxLines lowered since it grew can still be edited down.
    const quantities = new Map(body.lines.map((l) => [l.id, l.quantity]));
    const after = deps.repo
      .lines(cmd.tenantId, cmd.orderId)
      .map((l) => ({ ...l, quantity: quantities.get(l.id) ?? l.quantity }));
    checkOrderSize(cmd.orderId, after, { ...boundsOf(deps), maxLines: Infinity });
    for (const l of body.lines) deps.repo.setLineQuantity(cmd.tenantId, cmd.orderId, l.id, l.quantity, now);
    recomputeTotals(deps.repo, cmd.tenantId, cmd.orderId, now);
  },
});
