import type { PrinterConfig } from '../../config.js';
import { encodeTestPage } from './tickets.js';

export type { PrinterConfig };
export type PrintKind = 'kitchen' | 'claim' | 'cancel';

/** The raw TCP port of a network printer when the config names none (JetDirect/AppSocket). */
export const TCP_PRINTER_PORT = 9100;

/** Where a configured printer is: a serial device, or a host and port (printerProblems: exactly one). */
export type PrinterAddress = { kind: 'serial'; path: string } | { kind: 'tcp'; host: string; port: number };

export function printerAddress(p: PrinterConfig): PrinterAddress {
  if (p.host !== undefined) return { kind: 'tcp', host: p.host, port: p.port ?? TCP_PRINTER_PORT };
  return { kind: 'serial', path: p.path! };
}

/** The address as staff and the CLI see it: the serial path, or `tcp://host:port`. */
export function printerLocation(p: PrinterConfig): string {
  const a = printerAddress(p);
  if (a.kind === 'serial') return a.path;
  return tcpLocation(a.host, a.port);
}

export const tcpLocation = (host: string, port: number): string =>
  `tcp://${host.includes(':') ? `[${host}]` : host}:${port}`;

/**
 * Problems of the `printers` configuration that a schema cannot see: a printer with both or neither of `path`
 * and `host`, a `port` without `host`, duplicate names, a backup that names no printer (or itself), categories
 * on a counter printer, a code page the encoder does not know. The box
 * refuses to start with the first one, so a typo never becomes a ticket printed nowhere.
 */
export function printerProblems(printers: PrinterConfig[]): string[] {
  const problems: string[] = [];
  const names = new Set<string>();
  printers.forEach((p, i) => {
    if ((p.path === undefined) === (p.host === undefined)) {
      problems.push(
        `/printers/${i}: printer ${p.name} needs exactly one of "path" (a serial printer) or "host" (a network printer)${p.path === undefined ? '' : ', not both'}`,
      );
    } else if (p.port !== undefined && p.host === undefined) {
      problems.push(
        `/printers/${i}/port: printer ${p.name} is a serial printer ("path"): only a network printer ("host") takes a port`,
      );
    }
    if (names.has(p.name)) problems.push(`/printers/${i}/name: printer name ${p.name} is used twice`);
    names.add(p.name);
    if (p.role === 'counter' && p.categories) {
      problems.push(`/printers/${i}/categories: only a kitchen printer (a station) takes categories`);
    }
    try {
      encodeTestPage(p.name, p, 0);
    } catch {
      problems.push(`/printers/${i}/codePage: unknown code page ${p.codePage}`);
    }
  });
  printers.forEach((p, i) => {
    if (p.backup === undefined) return;
    const backup = printers.find((b) => b.name === p.backup);
    if (!backup) problems.push(`/printers/${i}/backup: no printer is named ${p.backup}`);
    else if (backup === p) problems.push(`/printers/${i}/backup: a printer cannot be its own backup`);
  });
  return problems;
}

/** Where one ticket of a command goes: a printer and the lines it prints there; `printer` null = unrouted. */
export interface Route<L> {
  printer: string | null;
  lines: L[];
}

/**
 * Routing at write time, decided from the configuration alone (pure, so the command's transaction stays
 * synchronous and the decision is recorded in the row):
 *
 * - kitchen: every kitchen printer of the venue. A station with `categories` prints only lines of those
 *   categories; a kitchen printer without categories prints every line. A line no station lists goes to the
 *   catch-all printers, or, if the venue has none, to its first kitchen printer: no line is ever left off.
 *   A printer with no line in the round gets no ticket.
 * - claim: the venue's first counter printer.
 * - cancel: the kitchen printers that got kitchen tickets of the order (`printedBy`), each with its share of
 *   the cancelled lines (all of them when its share is empty, e.g. after a change of categories).
 *
 * When nothing fits (no printer of that role at the venue), one unrouted ticket with every line.
 */
export function routeTicket<L extends { category?: string }>(
  printers: PrinterConfig[],
  venueId: string,
  kind: PrintKind,
  lines: L[],
  printedBy: string[] = [],
): Route<L>[] {
  const atVenue = printers.filter((p) => p.venue === venueId);
  if (kind === 'claim') {
    const counter = atVenue.find((p) => p.role === 'counter');
    return [{ printer: counter?.name ?? null, lines }];
  }
  const kitchen = atVenue.filter((p) => p.role === 'kitchen');
  if (kind === 'cancel') {
    const targets = kitchen.filter((p) => printedBy.includes(p.name));
    if (targets.length === 0) return [{ printer: null, lines }];
    const shares = splitByStation(kitchen, lines);
    return targets.map((p) => {
      const share = shares.get(p.name) ?? [];
      return { printer: p.name, lines: share.length > 0 ? share : lines };
    });
  }
  if (kitchen.length === 0) return [{ printer: null, lines }];
  const shares = splitByStation(kitchen, lines);
  return kitchen
    .filter((p) => (shares.get(p.name) ?? []).length > 0)
    .map((p) => ({ printer: p.name, lines: shares.get(p.name)! }));
}

/** Each kitchen printer's lines, in the order of the round. */
function splitByStation<L extends { category?: string }>(kitchen: PrinterConfig[], lines: L[]): Map<string, L[]> {
  const catchAll = kitchen.filter((p) => !p.categories);
  const shares = new Map<string, L[]>(kitchen.map((p) => [p.name, []]));
  for (const line of lines) {
    const stations = kitchen.filter((p) => p.categories?.includes(line.category ?? ''));
    const targets = [...stations, ...catchAll];
    if (targets.length === 0) targets.push(kitchen[0]!);
    for (const p of new Set(targets)) shares.get(p.name)!.push(line);
  }
  return shares;
}
