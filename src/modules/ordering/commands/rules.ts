import {
  type CommandErrorCode,
  commandProblem,
  CommandRejected,
  type ErrorDetail,
  reject,
} from '../../../shared/errors.js';
import type { SoldOutFlags } from '../../menus/sold-out.js';
import type { MenuService } from '../../menus/service.js';
import { isOpen } from '../../venues/opening-hours.js';
import type { VenueRepo } from '../../venues/repo.js';
import type { Venue } from '../../venues/schemas.js';
import { DEFAULT_ORDER_BOUNDS, type OrderBounds } from '../bounds.js';
import type { PrintJobs, TicketContext } from '../print-jobs.js';
import type { Command, LineRow, NewLine, OrderRepo, OrderRow } from '../repo.js';
import { channelOf, type OrderStatus, type OrderType } from '../schemas.js';

/**
 * The business rules the order commands share (each command's own are in its file beside this one).
 */

/** Lines as stored in a confirmed command: the ids were handed out in the confirmation. */
export interface StoredLine {
  id: string;
  productId: string;
  quantity: number;
  /** The line's kitchen note (`extra.note`). */
  note?: string;
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

/**
 * The order a command may act on, checked in this order: it exists for the user (`orderNotFound`), the user
 * may give the command (`forbidden`), the order is open (`orderClosed`), and the lifecycle table allows the
 * command in the order's status (`invalidTransition`, args: current status, command).
 */
export function orderFor(deps: CommandDeps, cmd: Command, command: Lifecycle): OrderRow {
  // The command's name is its registry key, as stored in the command log.
  const name = cmd.kind;
  const order = visibleOrder(deps.repo, cmd);
  if (command.staffOnly && !cmd.staff) throw reject('forbidden', `only staff may ${name} an order`, [name]);
  if (order.closed === 1 || isClosedStatus(order.status)) {
    throw reject('orderClosed', `the order is closed (${order.status})`, [cmd.orderId]);
  }
  if (!allowedIn(command, order.status, order.order_type as OrderType)) {
    throw reject('invalidTransition', `cannot ${name} an order in status ${order.status}`, [order.status, name]);
  }
  return order;
}

/**
 * Where a command on an existing order may be given: its row of the lifecycle table (docs/orders.md "The order
 * lifecycle"). A DINE_IN_OPEN order is a tab: after a submit it keeps taking rounds (edit, then submit again),
 * also once READY, so a tab allows some commands in more statuses.
 */
export interface Lifecycle {
  /** The statuses an open order may be in. */
  allowedIn: readonly OrderStatus[];
  /** The further statuses in which a tab (DINE_IN_OPEN) takes it. */
  tabAlsoIn?: readonly OrderStatus[];
  /** Only staff may give it; from anyone else it is `forbidden`. (`cancel` is staff-only once the kitchen has lines.) */
  staffOnly?: boolean;
}

/** Closed orders take no command at all (`orderClosed`). */
export const isClosedStatus = (status: string): boolean => status === 'COMPLETED' || status === 'CANCELLED';

export function allowedIn(command: Lifecycle, status: string, type: OrderType): boolean {
  const s = status as OrderStatus;
  return command.allowedIn.includes(s) || (type === 'DINE_IN_OPEN' && (command.tabAlsoIn?.includes(s) ?? false));
}

export function requireBucket(repo: OrderRepo, cmd: Command, venueId: string): void {
  if (!repo.bucketVenues(cmd.tenantId, cmd.orderId).includes(venueId)) {
    throw reject('invalidVenue', `venue ${venueId} is not part of this order`, [venueId]);
  }
}

/** The order if it lists the command's user (or the user is staff); to anyone else it does not exist. */
export function visibleOrder(repo: OrderRepo, cmd: Command) {
  const order = repo.order(cmd.tenantId, cmd.orderId);
  const listed = order && (cmd.staff || repo.users(cmd.tenantId, cmd.orderId).some((u) => u.userId === cmd.userId));
  if (!order || !listed) throw reject('orderNotFound', `order ${cmd.orderId} not found`, [cmd.orderId]);
  return order;
}

export function openVenue(deps: CommandDeps, tenantId: string, venueId: string, type: OrderType, now: number): Venue {
  const venue = deps.venues.getVenue(tenantId, venueId);
  if (!venue?.active) throw reject('invalidVenue', `venue ${venueId} is unknown or inactive`, [venueId]);
  const channel = channelOf(type);
  if (!isOpen(venue.channelConstraints[channel], venue.timeZone, now)) {
    throw reject('venueClosed', `venue ${venue.name} does not take ${type} orders now`, [venueId, channel]);
  }
  return venue;
}

/** Prices each line from the menu; every unknown product is reported, not just the first. */
export function priceLines(
  deps: CommandDeps,
  cmd: Command,
  venue: Venue,
  type: OrderType,
  lines: StoredLine[],
  now: number,
): NewLine[] {
  const problems: ErrorDetail<CommandErrorCode>[] = [];
  const priced: NewLine[] = [];
  for (const line of lines) {
    const product = deps.menus.productFor(cmd.tenantId, venue.menu, line.productId, channelOf(type));
    if (!product) {
      problems.push(
        commandProblem(
          'invalidProduct',
          `line ${line.id}: product ${line.productId} is not on the menu for ${channelOf(type)}`,
          [line.id, line.productId],
        ),
      );
      continue;
    }
    if (deps.soldOut.isSoldOut(cmd.tenantId, venue.id, product.id)) {
      problems.push(productUnavailable(line.id, product.id, venue.name));
      continue;
    }
    priced.push({
      id: line.id,
      venue_id: venue.id,
      creator: cmd.userId,
      product_id: product.id,
      quantity: line.quantity,
      price_minor: product.priceMinor,
      status: 'NEW',
      productJson: product.snapshotJson,
      created_ms: now,
      updated_ms: now,
      note: line.note ?? null,
    });
  }
  if (problems.length > 0) throw new CommandRejected(problems);
  return priced;
}

export const productUnavailable = (
  lineId: string,
  productId: string,
  venueName: string,
): ErrorDetail<CommandErrorCode> =>
  commandProblem('productUnavailable', `line ${lineId}: product ${productId} is sold out at ${venueName}`, [
    lineId,
    productId,
  ]);

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

const invalidLine = (lineId: string, venueId: string): ErrorDetail<CommandErrorCode> =>
  commandProblem('invalidLine', `line ${lineId} is not a NEW line of this order at venue ${venueId}`, [lineId]);

/** The named lines, each a NEW line of the order in the venue's bucket; every offender is reported. */
export function editableLines(deps: CommandDeps, cmd: Command, venueId: string, ids: string[]): LineRow[] {
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

export function ticketContext(deps: CommandDeps, cmd: Command, now: number): TicketContext {
  const order: OrderRow = deps.repo.order(cmd.tenantId, cmd.orderId)!;
  return { tenantId: cmd.tenantId, order, venueOf: (id) => deps.venues.getVenue(cmd.tenantId, id), nowMs: now };
}
