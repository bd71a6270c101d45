import { isoOf } from '../../shared/clock.js';
import { printerStatus } from '../../shared/socket-protocol.js';
import { type EventStore, type OutgoingFrame, venueStream } from '../events/event-store.js';
import type { PrintRepo } from './repo.js';
import type { StatusChange } from './spooler.js';

/**
 * PRINTER_STATUS frames on the printer's venue stream (`venue:<id>`, the staff sockets). They go through the
 * event store like ORDER_CHANGE: each takes the stream's next seq and is kept for replay, so a kitchen display
 * that reconnects with `?since=N` (token renewal, Wi-Fi drop) learns of a paper out it missed, and the seq of
 * the venue stream has no gaps. Written only on a change of status, never per poll, so the rate is bounded by
 * the printer's retry backoff.
 */
export function publishPrinterStatus(deps: {
  repo: PrintRepo;
  events: EventStore;
  push(frames: OutgoingFrame[]): void;
}): (change: StatusChange) => void {
  return (c) => {
    const event = printerStatus({
      printer: c.printer.name,
      venue: c.printer.venue,
      role: c.printer.role,
      status: c.status,
      previous: c.previous,
      since: isoOf(c.sinceMs),
      queueDepth: c.queueDepth,
      lastError: c.lastError && {
        reason: c.lastError.reason,
        message: c.lastError.message,
        at: isoOf(c.lastError.atMs),
      },
    });
    const frame = deps.repo.transaction(() =>
      deps.events.append(c.tenantId, venueStream(c.printer.venue), event, c.sinceMs),
    );
    deps.push([frame]);
  };
}
