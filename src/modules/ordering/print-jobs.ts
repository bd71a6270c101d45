import { zonedFormat } from '../../shared/clock.js';
import { formatMoney } from '../../shared/money.js';
import type { PrintKind } from '../printing/printers.js';
import type { JobTicket, JobTicketLine } from '../printing/schemas.js';
import type { PrintingService } from '../printing/service.js';
import type { Venue } from '../venues/schemas.js';
import type { LineRow, OrderRow } from './repo.js';

export interface TicketContext {
  tenantId: string;
  /** The order as the command left it. */
  order: OrderRow;
  venueOf(venueId: string): Venue | undefined;
  nowMs: number;
}

/**
 * The tickets an order command causes. They are written inside the transaction of the command (a side effect
 * comes from rows written in the same transaction), so a crash delays a ticket but never loses or duplicates it. This file decides which tickets exist and what they say; the printing module's service routes
 * each to the venue's printers and writes the jobs, and its spooler prints them.
 */
export function createPrintJobs(printing: Pick<PrintingService, 'enqueue'>) {
  function write(ctx: TicketContext, kind: PrintKind, round: number, lines: LineRow[], reason?: string): void {
    for (const [venueId, venueLines] of byVenue(lines)) {
      const venue = ctx.venueOf(venueId);
      printing.enqueue(ctx.tenantId, ticket(ctx, kind, round, venueId, venue, venueLines, reason), ctx.nowMs);
    }
  }

  return {
    /** A submit: the round's kitchen tickets per venue; on round 1 the customer's claim slip too. */
    submitted(ctx: TicketContext, round: number, roundLines: LineRow[]): void {
      write(ctx, 'kitchen', round, roundLines);
      if (round === 1) write(ctx, 'claim', round, roundLines);
    },
    /** A cancel of an order the kitchen had: cancel slips per venue listing what it no longer makes. */
    cancelled(ctx: TicketContext, orderedLines: LineRow[], reason: string | undefined): void {
      write(ctx, 'cancel', ctx.order.rounds, orderedLines, reason);
    },
  };
}
export type PrintJobs = ReturnType<typeof createPrintJobs>;

function byVenue(lines: LineRow[]): Map<string, LineRow[]> {
  const groups = new Map<string, LineRow[]>();
  for (const l of lines) {
    const group = groups.get(l.venue_id);
    if (group) group.push(l);
    else groups.set(l.venue_id, [l]);
  }
  return groups;
}

function ticket(
  ctx: TicketContext,
  kind: PrintKind,
  round: number,
  venueId: string,
  venue: Venue | undefined,
  lines: LineRow[],
  reason: string | undefined,
): JobTicket {
  const timeZone = venue?.timeZone ?? 'UTC';
  const ticketLines = lines.map((l): JobTicketLine => {
    const product = JSON.parse(l.product_json) as { literals?: { name?: string }; extra?: { category?: string } };
    const name = product.literals?.name ?? l.product_id;
    return {
      text: `${l.quantity} x ${name}`,
      quantity: l.quantity,
      name,
      category: product.extra?.category ?? '',
      price: formatMoney(l.price_minor),
      amount: formatMoney(l.price_minor * l.quantity),
      ...(l.note === null ? {} : { note: l.note }),
    };
  });
  return {
    kind,
    orderId: ctx.order.id,
    venueId,
    venueName: venue?.name ?? '',
    orderType: ctx.order.order_type,
    claimCode: ctx.order.claim_code,
    round,
    timeZone,
    at: ctx.nowMs,
    localTime: localTime(ctx.nowMs, timeZone),
    lines: ticketLines,
    total: formatMoney(lines.reduce((sum, l) => sum + l.price_minor * l.quantity, 0)),
    orderTotal: formatMoney(ctx.order.total_minor),
    ...(ctx.order.contact_json ? { contact: JSON.parse(ctx.order.contact_json) as Record<string, string> } : {}),
    ...(reason !== undefined ? { reason } : {}),
  };
}

/** `YYYY-MM-DD HH:MM` in the venue's zone (the sv-SE locale formats dates that way). */
const isoMinutes = zonedFormat('sv-SE', {
  year: 'numeric',
  month: '2-digit',
  day: '2-digit',
  hour: '2-digit',
  minute: '2-digit',
  hourCycle: 'h23',
});
const localTime = (ms: number, timeZone: string): string => isoMinutes(timeZone).format(new Date(ms));
