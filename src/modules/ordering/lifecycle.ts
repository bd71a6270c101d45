import { type CommandErrorCode, commandProblem, CommandRejected, type ErrorDetail, reject } from '../../shared/errors.js';
import { formatMoney, parseMoney } from '../../shared/money.js';
import type { Venue } from '../venues/schemas.js';
import { checkOrderSize } from './bounds.js';
import {
  boundsOf, type CommandDeps, openVenue, orderFor, productUnavailable, recomputeTotals, requireBucket,
} from './commands.js';
import type { TicketContext } from './print-jobs.js';
import type { CommandRecord, LineRow, OrderRow } from './repo.js';
import type { OrderType } from './schemas.js';

/** Bodies of the lifecycle commands as stored in the command log (already validated at the edge). */
export interface StoredUpdate {
  venue: string;
  lines: { id: string; quantity: number }[];
}
export interface StoredRemove {
  venue: string;
  lines: string[];
}
export interface StoredComplete {
  claimCode: string;
}
export interface StoredCancel {
  reason?: string;
}

const invalidLine = (lineId: string, venueId: string): ErrorDetail<CommandErrorCode> =>
  commandProblem('invalidLine', `line ${lineId} is not a NEW line of this order at venue ${venueId}`, [lineId]);

/** The named lines, each a NEW line of the order in the venue's bucket; every offender is reported. */
function editableLines(deps: CommandDeps, cmd: CommandRecord, venueId: string, ids: string[]): LineRow[] {
  const lines = new Map(deps.repo.lines(cmd.tenantId, cmd.orderId).map((l) => [l.id, l]));
  const problems: ErrorDetail<CommandErrorCode>[] = [];
  const found: LineRow[] = [];
  for (const id of ids) {
    const line = lines.get(id);
    if (!line || line.venue_id !== venueId || line.status !== 'NEW') problems.push(invalidLine(id, venueId));
    else found.push(line);
  }
  if (problems.length > 0) throw new CommandRejected(problems);
  return found;
}

/** `update`: new quantities for NEW lines. A sold-out product cannot be changed, only removed. */
export function applyUpdate(deps: CommandDeps, cmd: CommandRecord, now: number): void {
  const body = cmd.body as StoredUpdate;
  orderFor(deps, cmd, 'update');
  requireBucket(deps.repo, cmd, body.venue);
  const lines = editableLines(deps, cmd, body.venue, body.lines.map((l) => l.id));
  const locked = lines.filter((l) => deps.soldOut.isSoldOut(cmd.tenantId, body.venue, l.product_id));
  if (locked.length > 0) {
    const name = deps.venues.getVenue(cmd.tenantId, body.venue)?.name ?? body.venue;
    throw new CommandRejected(locked.map((l) => productUnavailable(l.id, l.product_id, name)));
  }
  // Larger quantities can push the order's value past its ceiling. The line count does not change, so it is
  // not checked: an order over a maxLines lowered since it grew can still be edited down.
  const quantities = new Map(body.lines.map((l) => [l.id, l.quantity]));
  const after = deps.repo.lines(cmd.tenantId, cmd.orderId).map((l) => ({ ...l, quantity: quantities.get(l.id) ?? l.quantity }));
  checkOrderSize(cmd.orderId, after, { ...boundsOf(deps), maxLines: Infinity });
  for (const l of body.lines) deps.repo.setLineQuantity(cmd.tenantId, cmd.orderId, l.id, l.quantity, now);
  recomputeTotals(deps.repo, cmd.tenantId, cmd.orderId, now);
}

/** `remove`: NEW lines leave the order. They were never ordered, so they are deleted, not CANCELLED. */
export function applyRemove(deps: CommandDeps, cmd: CommandRecord, now: number): void {
  const body = cmd.body as StoredRemove;
  orderFor(deps, cmd, 'remove');
  requireBucket(deps.repo, cmd, body.venue);
  for (const l of editableLines(deps, cmd, body.venue, body.lines)) deps.repo.deleteLine(cmd.tenantId, cmd.orderId, l.id);
  recomputeTotals(deps.repo, cmd.tenantId, cmd.orderId, now);
}

/**
 * `submit`: the NEW lines go to the kitchen as the next round. Every venue with new lines must be open, no
 * new line may be sold out, and a DELIVERY bucket must reach the venue's minOrderValue; all such problems are
 * reported together. The round's kitchen tickets (and on the first round the claim slip) are written here.
 */
export function applySubmit(deps: CommandDeps, cmd: CommandRecord, now: number): void {
  const order = orderFor(deps, cmd, 'submit');
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
        problems.push(commandProblem('minOrderValue',
          `delivery from ${venue.name} needs at least ${formatMoney(required)}, the order has ${formatMoney(actual)}`,
          [venueId, formatMoney(required), formatMoney(actual)]));
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
}

/** `ready` (staff): the kitchen is done with what was ordered; the customer's socket hears it. */
export function applyReady(deps: CommandDeps, cmd: CommandRecord, now: number): void {
  const order = orderFor(deps, cmd, 'ready');
  deps.repo.setStatus(cmd.tenantId, cmd.orderId, 'READY', order.rounds, now);
}

/**
 * `complete` (staff): handed over against the claim code. A tab's round that was never submitted is not
 * part of what was handed over or paid, so its NEW lines become CANCELLED.
 */
export function applyComplete(deps: CommandDeps, cmd: CommandRecord, now: number): void {
  const body = cmd.body as StoredComplete;
  const order = orderFor(deps, cmd, 'complete');
  if (body.claimCode !== order.claim_code) {
    throw reject('invalidClaimCode', 'the claim code does not match this order', [cmd.orderId]);
  }
  deps.repo.cancelLines(cmd.tenantId, cmd.orderId, now, true);
  deps.repo.closeOrder(cmd.tenantId, cmd.orderId, 'COMPLETED', true, now);
  recomputeTotals(deps.repo, cmd.tenantId, cmd.orderId, now);
}

/**
 * `cancel`: a user may cancel while the kitchen has nothing (no ORDERED line); staff always. Every line
 * becomes CANCELLED, the claim code is freed, and the kitchen gets a cancel slip for what it had.
 */
export function applyCancel(deps: CommandDeps, cmd: CommandRecord, now: number): void {
  const body = cmd.body as StoredCancel;
  orderFor(deps, cmd, 'cancel');
  const ordered = deps.repo.lines(cmd.tenantId, cmd.orderId).filter((l) => l.status === 'ORDERED');
  if (ordered.length > 0 && !cmd.staff) {
    throw reject('forbidden', 'the kitchen has this order: only staff may cancel it now', ['cancel']);
  }
  deps.repo.cancelLines(cmd.tenantId, cmd.orderId, now);
  deps.repo.closeOrder(cmd.tenantId, cmd.orderId, 'CANCELLED', false, now);
  recomputeTotals(deps.repo, cmd.tenantId, cmd.orderId, now);
  if (ordered.length > 0) deps.printJobs.cancelled(ticketContext(deps, cmd, now), ordered, body.reason);
}

function ticketContext(deps: CommandDeps, cmd: CommandRecord, now: number): TicketContext {
  const order: OrderRow = deps.repo.order(cmd.tenantId, cmd.orderId)!;
  return { tenantId: cmd.tenantId, order, venueOf: (id) => deps.venues.getVenue(cmd.tenantId, id), nowMs: now };
}
