import ReceiptPrinterEncoder from '@point-of-sale/receipt-printer-encoder';
import { zonedFormat } from '../../shared/clock.js';
import { transliterate } from './transliterate.js';

/** What a printer needs to know to encode: its width and its code page (cp852 for Polish by default). */
export interface PrinterFormat {
  columns: number;
  codePage: string;
}

export interface TicketLine {
  quantity: number;
  name: string;
  category?: string;
  price?: string;
  /** A kitchen note: printed under the line on kitchen and cancel tickets. */
  note?: string;
}

interface TicketBase {
  venueName: string;
  orderType: string;
  claimCode: string;
  orderId: string;
  /** When the order event happened, ms since epoch; printed in the venue's time zone. */
  at: number;
  timeZone: string;
  lines: TicketLine[];
}

export type Ticket =
  | (TicketBase & { kind: 'kitchen'; round: number })
  | (TicketBase & { kind: 'cancel'; reason?: string })
  | (TicketBase & { kind: 'claim'; total: string });

/** Options of one printing of a ticket: a reprint says COPY, a backup printer names the printer it was for. */
export interface PrintOptions {
  copy?: boolean;
  forPrinter?: string;
}

const TITLES: Record<Ticket['kind'], string> = {
  kitchen: 'KUCHNIA / KITCHEN',
  cancel: 'ANULOWANE / CANCELLED',
  claim: 'ODBIÓR / PICK-UP',
};

/**
 * The order type in words, in both languages of the ticket (as its titles), never the API's enum: a cook reads
 * "NA WYNOS / TAKE-AWAY", not TAKE_AWAY (docs/printing.md "Printing: kitchen tickets and claim slips on serial
 * receipt printers"). A type this box has no words for (a newer box's) is printed as the API names it.
 */
const ORDER_TYPES: Record<string, string> = {
  TAKE_AWAY: 'NA WYNOS / TAKE-AWAY',
  DELIVERY: 'DOSTAWA / DELIVERY',
  DINE_IN: 'NA MIEJSCU / DINE-IN',
  DINE_IN_OPEN: 'RACHUNEK / TAB',
};

const orderTypeText = (orderType: string): string => ORDER_TYPES[orderType] ?? orderType;

/** One formatter per time zone: building an Intl.DateTimeFormat costs about 0.1 ms, a tenth of a ticket. */
const ticketTime = zonedFormat('pl-PL', {
  year: 'numeric',
  month: '2-digit',
  day: '2-digit',
  hour: '2-digit',
  minute: '2-digit',
  hourCycle: 'h23',
});

export const localTimeText = (ms: number, timeZone: string): string => ticketTime(timeZone).format(new Date(ms));

/** Encodes one ticket as ESC/POS bytes: initialise, code page, content, feed and cut. */
export function encodeTicket(ticket: Ticket, format: PrinterFormat, options: PrintOptions = {}): Uint8Array {
  const e = new ReceiptPrinterEncoder({ language: 'esc-pos', columns: format.columns, codepageMapping: 'epson' });
  // Every text that comes from data (names, notes, reasons) goes through the code page's transliteration.
  const t = (text: string): string => transliterate(text, format.codePage);
  e.initialize().codepage(format.codePage as never);
  if (options.forPrinter)
    e.invert(true)
      .line(t(` ZAMIAST / FOR: ${options.forPrinter} `))
      .invert(false);
  if (options.copy) e.align('center').bold(true).line('*** KOPIA / COPY ***').bold(false);
  e.align('center').bold(true).line(TITLES[ticket.kind]).bold(false).line(t(ticket.venueName));
  e.line(t(orderTypeText(ticket.orderType))).line(localTimeText(ticket.at, ticket.timeZone));
  if (ticket.kind === 'kitchen') e.line(`Runda / Round ${ticket.round}`);
  e.size(3, 3).bold(true).line(t(ticket.claimCode)).bold(false).size(1, 1);
  e.align('left').rule();
  for (const line of ticket.lines) {
    if (ticket.kind === 'claim') {
      e.table(
        [{ width: format.columns - 10 }, { width: 10, align: 'right' }],
        [[t(`${line.quantity} x ${line.name}`), t(line.price ?? '')]],
      );
    } else {
      e.size(2, 2)
        .line(t(`${line.quantity} x ${line.name}`))
        .size(1, 1);
      // Wrapped to the width by the encoder; bold so the cook sees it next to the large line.
      if (line.note)
        e.bold(true)
          .line(t(`  >> ${line.note}`))
          .bold(false);
    }
  }
  e.rule();
  if (ticket.kind === 'cancel' && ticket.reason) e.line(t(`Powód / Reason: ${ticket.reason}`));
  if (ticket.kind === 'claim') {
    e.align('right').bold(true).line(`RAZEM / TOTAL ${ticket.total}`).bold(false);
    e.align('center').qrcode(ticket.orderId, { model: 2, size: 6, errorlevel: 'm' });
    e.line('To nie jest paragon fiskalny').line('Not a fiscal receipt');
  }
  return e.newline(2).cut('partial').encode();
}

/** The page `venue-box printers test NAME` prints: the code page's Polish letters and a cut. */
export function encodeTestPage(printerName: string, format: PrinterFormat, at: number): Uint8Array {
  const e = new ReceiptPrinterEncoder({ language: 'esc-pos', columns: format.columns, codepageMapping: 'epson' });
  return e
    .initialize()
    .codepage(format.codePage as never)
    .align('center')
    .bold(true)
    .line('venue-box: strona testowa')
    .bold(false)
    .line(printerName)
    .line(new Date(at).toISOString())
    .align('left')
    .rule()
    .line('ĄĆĘŁŃÓŚŹŻ ąćęłńóśźż')
    .line('Żurek, Gęś, Łódź')
    .line(`${format.columns} kolumn, ${format.codePage}`)
    .rule()
    .newline(2)
    .cut('partial')
    .encode();
}
