/**
 * A box's clock is data, never a gate (docs/sync.md "Clocks"). A box without a real-time clock comes up in 1970
 * after a power cut and runs so until NTP answers; another runs a year ahead. Its events are kept as it wrote
 * them (the envelope, the Order's `created`, the document's `created`), and the central orders them by sequence.
 * Where the central needs an instant of its own (the HQ lists' order, the reports' days, a cursor), it takes the
 * box's time moved to its own clock here, so no event is ever set aside for a wrong clock.
 */

/** What the central knows of a device's clock when it projects one of its events. */
export interface BoxClock {
  /** The box's clock less the central's, measured at the device's last hello; null before its first. */
  offsetMs: number | null;
  /** When the central received the event, on its own clock: nothing happened on the box after that. */
  receivedMs: number;
}

/**
 * A box within this of the central is taken at its word: the offset a hello measures carries the network's
 * one-way delay, so it is no better than the box's own clock, and a healthy box's times stay exactly its own.
 */
export const TRUSTED_SKEW_MS = 60_000;

/** No box wrote an event before this; a time before it is a clock that lost its setting (1970 and after). */
export const EARLIEST_MS = Date.UTC(2000, 0, 1);

/**
 * The central's instant of a time `boxMs` on a device's clock: the box's time less its measured offset when
 * that is past TRUSTED_SKEW_MS; and when the result is still impossible (before 2000, or after the central
 * received the event: the clock was set right or wrong between the event and its hello), the receive time,
 * which is the latest the event can have happened. Always a date of years 2000-9999 (HQ's cursors carry it).
 */
export function centralInstant(boxMs: number, clock: BoxClock): Date {
  const offset = clock.offsetMs ?? 0;
  const ms = Math.abs(offset) > TRUSTED_SKEW_MS ? boxMs - offset : boxMs;
  const latest = clock.receivedMs + TRUSTED_SKEW_MS;
  return new Date(Number.isFinite(ms) && ms >= EARLIEST_MS && ms <= latest ? ms : clock.receivedMs);
}
