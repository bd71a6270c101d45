import { type CommandErrorCode, commandProblem, CommandRejected, type ErrorDetail, reject } from '../../shared/errors.js';
import type { SoldOutFlags } from '../menus/sold-out.js';
import type { MenuService } from '../menus/service.js';
import { isOpen } from '../venues/opening-hours.js';
import type { VenueRepo } from '../venues/repo.js';
import type { Venue } from '../venues/schemas.js';
import { checkOpenOrders, checkOrderSize, DEFAULT_ORDER_BOUNDS, type OrderBounds } from './bounds.js';
import { pickClaimCode } from './claim-code.js';
import type { PrintJobs } from './print-jobs.js';
import type { CommandRecord, NewLine, OrderRepo, OrderRow } from './repo.js';
import { channelOf, type OrderType } from './schemas.js';
import { allowedIn, type CommandName, isClosedStatus, STAFF_ONLY } from './transitions.js';

/** Lines as stored in a confirmed command: the ids were handed out in the confirmation. */
export interface StoredLine {
  id: string;
  productId: string;
  quantity: number;
  /** The line's kitchen note (`extra.note`). */
  note?: string;
}
export interface StoredNew {
  orderType: OrderType;
  buckets: { venue: string; lines: StoredLine[] }[];
  contact?: Record<string, string>;
  extra?: Record<string, string>;
}
export interface StoredAppend {
  venue: string;
  lines: StoredLine[];
}

export interface CommandDeps {
  repo: OrderRepo;
  venues: VenueRepo;
  menus: MenuService;
  /** Sold-out products per venue (the menus module's flags). */
  soldOut: Pick<SoldOutFlags, 'isSoldOut'>;
  printJobs: PrintJobs;
  source: string;
  /** Size limits of orders (config `ordering.*`); the defaults when absent. */
  bounds?: OrderBounds;
}

export const boundsOf = (deps: CommandDeps): OrderBounds => deps.bounds ?? DEFAULT_ORDER_BOUNDS;

export const ROLES_OF_CREATOR = ['CREATOR', 'CUSTOMER'];

/** Business rules of `new`: venues open, products on the menu; then the order, its lines and its creator. */
export function applyNew(deps: CommandDeps, cmd: CommandRecord, now: number): void {
  const body = cmd.body as StoredNew;
  // Staff open orders for many guests; a customer's token is free, so its open orders are bounded.
  if (!cmd.staff) checkOpenOrders(deps.repo.openOrdersOf(cmd.tenantId, cmd.userId), boundsOf(deps));
  const venues = body.buckets.map((b) => openVenue(deps, cmd.tenantId, b.venue, body.orderType, now));
  const lines = body.buckets.flatMap((b, i) => priceLines(deps, cmd, venues[i]!, body.orderType, b.lines, now));
  checkOrderSize(cmd.orderId, lines, boundsOf(deps));
  const claimCode = pickClaimCode((code) => venues.some((v) => deps.repo.claimTaken(cmd.tenantId, v.id, code)));
  deps.repo.insertOrder({
    tenantId: cmd.tenantId, id: cmd.orderId, orderType: body.orderType, claimCode,
    source: body.extra?.['X-SOURCE'] ?? deps.source,
    contactJson: body.contact ? JSON.stringify(body.contact) : null,
    extraJson: body.extra ? JSON.stringify(body.extra) : null, nowMs: now,
  });
  venues.forEach((v, i) => deps.repo.insertBucket(cmd.tenantId, cmd.orderId, v.id, i, claimCode));
  deps.repo.insertUser(cmd.tenantId, cmd.orderId, cmd.userId, ROLES_OF_CREATOR);
  for (const line of lines) deps.repo.insertLine(cmd.tenantId, cmd.orderId, line);
  recomputeTotals(deps.repo, cmd.tenantId, cmd.orderId, now);
}

/** Business rules of `append`: the order is the user's and open, the venue is one of its buckets and open. */
export function applyAppend(deps: CommandDeps, cmd: CommandRecord, now: number): void {
  const body = cmd.body as StoredAppend;
  const order = orderFor(deps, cmd, 'append');
  requireBucket(deps.repo, cmd, body.venue);
  const type = order.order_type as OrderType;
  const venue = openVenue(deps, cmd.tenantId, body.venue, type, now);
  const added = priceLines(deps, cmd, venue, type, body.lines, now);
  checkOrderSize(cmd.orderId, [...deps.repo.lines(cmd.tenantId, cmd.orderId), ...added], boundsOf(deps));
  for (const line of added) deps.repo.insertLine(cmd.tenantId, cmd.orderId, line);
  recomputeTotals(deps.repo, cmd.tenantId, cmd.orderId, now);
}

/**
 * The order a command may act on, checked in this order: it exists for the user (`orderNotFound`), the user
 * may give the command (`forbidden`), the order is open (`orderClosed`), and the lifecycle table allows the
 * command in the order's status (`invalidTransition`, args: current status, command).
 */
export function orderFor(deps: CommandDeps, cmd: CommandRecord, command: Exclude<CommandName, 'new'>): OrderRow {
  const order = visibleOrder(deps.repo, cmd);
  if (STAFF_ONLY.has(command) && !cmd.staff) throw reject('forbidden', `only staff may ${command} an order`, [command]);
  if (order.closed === 1 || isClosedStatus(order.status)) {
    throw reject('orderClosed', `the order is closed (${order.status})`, [cmd.orderId]);
  }
  if (!allowedIn(command, order.status, order.order_type as OrderType)) {
    throw reject('invalidTransition', `cannot ${command} an order in status ${order.status}`, [order.status, command]);
  }
  return order;
}

export function requireBucket(repo: OrderRepo, cmd: CommandRecord, venueId: string): void {
  if (!repo.bucketVenues(cmd.tenantId, cmd.orderId).includes(venueId)) {
    throw reject('invalidVenue', `venue ${venueId} is not part of this order`, [venueId]);
  }
}

/** The order if it lists the command's user (or the user is staff); to anyone else it does not exist. */
export function visibleOrder(repo: OrderRepo, cmd: CommandRecord) {
  const order = repo.order(cmd.tenantId, cmd.orderId);
  const listed = order && (cmd.staff || repo.users(cmd.tenantId, cmd.orderId).some((u) => u.userId === cmd.userId));
  if (!order || !listed) throw reject('orderNotFound', `order ${cmd.orderId} not found`, [cmd.orderId]);
  return order;
}

export function openVenue(deps: CommandDeps, tenantId: string, venueId: string, type: OrderType, now: number): Venue {
  const venue = deps.venues.getVenue(tenantId, venueId);
  if (!venue || !venue.active) throw reject('invalidVenue', `venue ${venueId} is unknown or inactive`, [venueId]);
  const channel = channelOf(type);
  if (!isOpen(venue.channelConstraints[channel], venue.timeZone, now)) {
    throw reject('venueClosed', `venue ${venue.name} does not take ${type} orders now`, [venueId, channel]);
  }
  return venue;
}

/** Prices each line from the menu; every unknown product is reported, not just the first. */
function priceLines(
  deps: CommandDeps, cmd: CommandRecord, venue: Venue, type: OrderType, lines: StoredLine[], now: number,
): NewLine[] {
  const problems: ErrorDetail<CommandErrorCode>[] = [];
  const priced: NewLine[] = [];
  for (const line of lines) {
    const product = deps.menus.productFor(cmd.tenantId, venue.menu, line.productId, channelOf(type));
    if (!product) {
      problems.push(commandProblem('invalidProduct',
        `line ${line.id}: product ${line.productId} is not on the menu for ${channelOf(type)}`, [line.id, line.productId]));
      continue;
    }
    if (deps.soldOut.isSoldOut(cmd.tenantId, venue.id, product.id)) {
      problems.push(productUnavailable(line.id, product.id, venue.name));
      continue;
    }
    priced.push({
      id: line.id, venue_id: venue.id, creator: cmd.userId, product_id: product.id, quantity: line.quantity,
      price_minor: product.priceMinor, status: 'NEW', productJson: product.snapshotJson, created_ms: now,
      updated_ms: now, note: line.note ?? null,
    });
  }
  if (problems.length > 0) throw new CommandRejected(problems);
  return priced;
}

export const productUnavailable = (lineId: string, productId: string, venueName: string): ErrorDetail<CommandErrorCode> =>
  commandProblem('productUnavailable', `line ${lineId}: product ${productId} is sold out at ${venueName}`, [lineId, productId]);

/** editTotal is the sum of NEW lines; total the sum of ORDERED ones. */
export function recomputeTotals(repo: OrderRepo, tenantId: string, orderId: string, now: number): void {
  let edit = 0;
  let total = 0;
  for (const l of repo.lines(tenantId, orderId)) {
    if (l.status === 'NEW') edit += l.price_minor * l.quantity;
    else if (l.status === 'ORDERED') total += l.price_minor * l.quantity;
  }
  repo.touchOrder(tenantId, orderId, edit, total, now);
}
