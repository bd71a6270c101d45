import { invalidField } from '../../../shared/errors.js';

/**
 * Local dates of the reports and the order search (docs/sync.md "HQ reports and order search"): `YYYY-MM-DD`,
 * inclusive, each venue's own calendar. They are compared with the facts' `local_day`, so no time zone is
 * applied here; day arithmetic is done on UTC midnights, which have no daylight saving.
 */
const DATE = /^(\d{4})-(\d\d)-(\d\d)$/;
const DAY_MS = 86_400_000;

/** Days since 1970-01-01 of a real calendar date of years 2000-9999, or NaN. */
function dayNumber(text: string): number {
  const m = DATE.exec(text);
  if (!m) return Number.NaN;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const ms = Date.UTC(y, mo - 1, d);
  const back = new Date(ms);
  if (y < 2000 || back.getUTCMonth() !== mo - 1 || back.getUTCDate() !== d) return Number.NaN;
  return ms / DAY_MS;
}

export const dateOfDay = (day: number): string => new Date(day * DAY_MS).toISOString().slice(0, 10);

/** A date parameter: absent is undefined (or a 400 when required), a bad one a 400 naming it. */
export function dateParam(query: URLSearchParams, name: string, required: boolean): string | undefined {
  const value = query.get(name);
  if (value === null && !required) return undefined;
  if (value === null || Number.isNaN(dayNumber(value)))
    throw invalidField(name, `${name} must be a date YYYY-MM-DD (years 2000-9999)`);
  return value;
}

/** `from` and `to` of a report: both required, from <= to, at most `maxDays` days together. */
export function rangeParams(query: URLSearchParams, maxDays: number): { from: string; to: string } {
  const from = dateParam(query, 'from', true)!;
  const to = dateParam(query, 'to', true)!;
  const days = dayNumber(to) - dayNumber(from) + 1;
  if (days < 1) throw invalidField('to', 'to must not be before from');
  if (days > maxDays) throw invalidField('to', `from and to may span at most ${maxDays} days`);
  return { from, to };
}

/**
 * The instants a local date can start and end at anywhere (UTC+14 to UTC-12): bounds on created_at that let the
 * order search walk its index, while the exact test stays the venue's local_day.
 */
export function createdBounds(from?: string, to?: string): { after: Date | null; before: Date | null } {
  return {
    after: from === undefined ? null : new Date((dayNumber(from) * 24 - 14) * 3_600_000),
    before: to === undefined ? null : new Date(((dayNumber(to) + 1) * 24 + 12) * 3_600_000),
  };
}

/** A time zone the runtime knows, else `fallback`. */
export function zoneOr(zone: string | null | undefined, fallback: string): string {
  if (!zone) return fallback;
  try {
    new Intl.DateTimeFormat('en-CA', { timeZone: zone });
    return zone;
  } catch {
    return fallback;
  }
}

/** The date at `ms` in `zone` (YYYY-MM-DD) and the Monday of its week. */
export function todayIn(zone: string, ms: number): { today: string; weekFrom: string } {
  const today = new Intl.DateTimeFormat('en-CA', { timeZone: zone, year: 'numeric', month: '2-digit', day: '2-digit' })
    .format(ms)
    .slice(0, 10);
  const day = dayNumber(today);
  // 1970-01-01 was a Thursday: (day + 3) % 7 is 0 on Mondays.
  return { today, weekFrom: dateOfDay(day - ((day + 3) % 7)) };
}
