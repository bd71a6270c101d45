import type { InstallWindow } from '../../shared/release-schemas.js';
import { isOpen, localTime } from '../venues/opening-hours.js';
import { CHANNELS, type Venue } from '../venues/schemas.js';

/** True when no active venue of the box is open on any channel at `ms` (no venues: true). */
export function venuesClosed(venues: Venue[], ms: number): boolean {
  return venues.every((v) => !v.active || CHANNELS.every((c) => !isOpen(v.channelConstraints[c], v.timeZone, ms)));
}

/** Minutes since midnight at `ms` in the venues' time zone (the first venue's; the system's without venues). */
export function localMinutes(venues: Venue[], ms: number): number {
  const zone = venues[0]?.timeZone ?? Intl.DateTimeFormat().resolvedOptions().timeZone;
  return localTime(ms, zone).minutes;
}

const minutesOf = (hhmm: string): number => {
  const [h, m] = hhmm.split(':');
  return Number(h) * 60 + Number(m);
};

/**
 * Whether `minutes` (since local midnight) falls in a daily window; a window that ends before it starts runs past
 * midnight (22:00-05:00), and 00:00-24:00 is the whole day.
 */
export function inDailyWindow(window: { from: string; to: string }, minutes: number): boolean {
  const from = minutesOf(window.from);
  const to = minutesOf(window.to);
  return from <= to ? minutes >= from && minutes < to : minutes >= from || minutes < to;
}

export interface Quiet {
  openOrders: number;
  lastCommandMs: number | null;
}

/**
 * Why the box may not install now, or undefined (docs/operations.md "Updating boxes"): outside its window (the
 * venues' closed hours by default), an order open (ordered and not yet collected, or a tab), or a command within
 * the last `quietMinutes`.
 */
export function notNow(
  window: InstallWindow | 'now',
  at: { ms: number; localMinutes: number; venuesClosed: boolean },
  quiet: Quiet,
  quietMinutes: number,
): string | undefined {
  if (window === 'closed' && !at.venuesClosed) return 'waiting for the venues to close';
  if (typeof window === 'object' && !inDailyWindow(window, at.localMinutes)) {
    return `waiting for the install window ${window.from}-${window.to}`;
  }
  if (quiet.openOrders > 0) return `${quiet.openOrders} order(s) open`;
  if (window !== 'now' && quiet.lastCommandMs !== null && at.ms - quiet.lastCommandMs < quietMinutes * 60_000) {
    return `an order command within the last ${quietMinutes} minutes`;
  }
  return undefined;
}
