import {
  CommandRejected,
  type CommandErrorCode,
  commandProblem,
  type ErrorDetail,
  reject,
} from '../../../shared/errors.js';
import { formatMoney, parseMoney } from '../../../shared/money.js';
import type { Venue } from '../../venues/schemas.js';
import { EmptyBody, type OrderType } from '../schemas.js';
import { defineCommand } from './define.js';
import { type Lifecycle, openVenue, orderFor, productUnavailable, recomputeTotals, ticketContext } from './rules.js';

const lifecycle: Lifecycle = { allowedIn: ['NEW', 'ORDERED'], tabAlsoIn: ['READY'] };

/**
 * `submit`: the NEW lines go to the kitchen as the next round. Every venue with new lines must be open, no
 * new line may be sold out, and a DELIVERY bucket must reach the venue's minOrderValue; all such problems are
 * reported together. The round's kitchen tickets (and on the first round the claim slip) are written here.
 */
export const submitCommand = defineCommand({
  summary: 'Send the NEW lines to the kitchen as the next round',
  lifecycle,
  body: EmptyBody,
  bodyRequired: false,
  confirm: () => ({ stored: {}, lines: [] }),
  apply(deps, cmd, _body: Record<string, never>, now) {
    const order = orderFor(deps, cmd, lifecycle);
    const type = order.order_type as OrderType;
    const lines = deps.repo.lines(cmd.tenantId, cmd.orderId);
    const fresh = lines.filter((l) => l.status === 'NEW');
    if (fresh.length === 0) throw reject('emptyOrder', 'the order has no NEW line to submit', [cmd.orderId]);

    const problems: ErrorDetail<CommandErrorCode>[] = [];
    for (const venueId of new Set(fresh.map((l) => l.venue_id))) {
      let venue: Venue;
      try {
        venue = openVenue(deps, cmd.tenantId, venueId, type, now);
      } catch (err) {
        if (!(err instanceof CommandRejected)) throw err;
        problems.push(...err.codes);
        continue;
      }
      for (const l of fresh) {
        if (l.venue_id === venueId && deps.soldOut.isSoldOut(cmd.tenantId, venueId, l.product_id)) {
          problems.push(productUnavailable(l.id, l.product_id, venue.name));
        }
      }
      const minimum = type === 'DELIVERY' ? venue.channelConstraints.DELIVERY?.minOrderValue : undefined;
      if (minimum !== undefined) {
        const required = parseMoney(minimum);
        const actual = lines
          .filter((l) => l.venue_id === venueId && l.status !== 'CANCELLED')
          .reduce((sum, l) => sum + l.price_minor * l.quantity, 0);
        if (actual < required) {
          problems.push(
            commandProblem(
              'minOrderValue',
              `delivery from ${venue.name} needs at least ${formatMoney(required)}, the order has ${formatMoney(actual)}`,
              [venueId, formatMoney(required), formatMoney(actual)],
            ),
          );
        }
      }
    }
    if (problems.length > 0) throw new CommandRejected(problems);

    const round = order.rounds + 1;
    deps.repo.orderNewLines(cmd.tenantId, cmd.orderId, round, now);
    deps.repo.setStatus(cmd.tenantId, cmd.orderId, 'ORDERED', round, now);
    recomputeTotals(deps.repo, cmd.tenantId, cmd.orderId, now);
    const roundLines = deps.repo.lines(cmd.tenantId, cmd.orderId).filter((l) => l.round === round);
    deps.printJobs.submitted(ticketContext(deps, cmd, now), round, roundLines);
  },
});
