import { type Static, Type } from '@sinclair/typebox';
import type { PrintKind } from './printers.js';
import type { Ticket } from './tickets.js';

/** One line of a job's ticket: `text` is what the kitchen reads ("2 x Żurek"); the rest is for layout. */
export interface JobTicketLine {
  text: string;
  quantity: number;
  name: string;
  category: string;
  /** Unit price. */
  price: string;
  /** quantity x price. */
  amount: string;
  /** The line's kitchen note (`extra.note`), printed under it. */
  note?: string;
}

/**
 * A print job's `payload_json`: everything its ticket needs, so the spooler prints from the row alone, even
 * after the order moved on. The ordering module builds it (src/modules/ordering/print-jobs.ts); the field
 * names follow `Ticket` (tickets.ts). `localTime`, `venueId`, `orderTotal` and `contact` are extra, for staff
 * displays and logs. A kitchen station's job holds only its share of the round's lines, `total` their value.
 */
export interface JobTicket {
  kind: PrintKind;
  orderId: string;
  venueId: string;
  venueName: string;
  orderType: string;
  claimCode: string;
  round: number;
  timeZone: string;
  /** When the command was applied, ms since the epoch; `localTime` is the same instant on the venue's clock. */
  at: number;
  localTime: string;
  lines: JobTicketLine[];
  total: string;
  orderTotal: string;
  contact?: Record<string, string>;
  reason?: string;
}

/** The encoder's view of a job ticket; a claim slip's right-hand column is the line's amount. */
export function toTicket(t: JobTicket): Ticket {
  const base = {
    venueName: t.venueName,
    orderType: t.orderType,
    claimCode: t.claimCode,
    orderId: t.orderId,
    at: t.at,
    timeZone: t.timeZone,
    lines: t.lines.map((l) => ({
      quantity: l.quantity,
      name: l.name,
      category: l.category,
      price: l.amount,
      ...(l.note === undefined ? {} : { note: l.note }),
    })),
  };
  if (t.kind === 'kitchen') return { ...base, kind: 'kitchen', round: t.round };
  if (t.kind === 'cancel') return { ...base, kind: 'cancel', ...(t.reason ? { reason: t.reason } : {}) };
  return { ...base, kind: 'claim', total: t.total };
}

export const JOB_STATES = ['queued', 'printed', 'expired', 'failed', 'unrouted'] as const;
export type JobState = (typeof JOB_STATES)[number];

export type PrinterStatus = 'ok' | 'paperOut' | 'paperNearEnd' | 'offline' | 'unknown';

export interface PrinterErrorView {
  reason: string;
  message: string;
  at: string;
}

/** GET /printing-api/api/printers, one item. */
export interface PrinterView {
  name: string;
  venue: string;
  role: 'kitchen' | 'counter';
  /** The serial device, or `tcp://host:port` for a network printer (printers.ts printerLocation). */
  path: string;
  backup: string | null;
  categories: string[] | null;
  status: PrinterStatus;
  /** Since when the printer has had this status (ISO), null while unknown. */
  statusSince: string | null;
  /** While the printer is down longer than backupAfterSeconds, the printer now printing its jobs. */
  divertedTo: string | null;
  queueDepth: number;
  /** Age of the oldest queued job in ms, null with an empty queue. */
  oldestJobAgeMs: number | null;
  lastError: PrinterErrorView | null;
}

/** GET /printing-api/api/jobs, one item. */
export interface JobView {
  id: string;
  printer: string | null;
  venue: string;
  orderId: string;
  kind: PrintKind;
  round: number;
  state: JobState;
  copyOf: string | null;
  attempts: number;
  lastError: string | null;
  printedOn: string | null;
  created: string;
  done: string | null;
  ticket: JobTicket;
}

/** POST /printing-api/api/jobs/{id}/reprint: optionally on another printer of the venue. */
export const ReprintBody = Type.Object(
  { printer: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })) },
  { additionalProperties: false },
);
export type ReprintBody = Static<typeof ReprintBody>;

export interface JobQuery {
  printer?: string;
  state?: JobState;
  limit: number;
}
