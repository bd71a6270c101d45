import { bootstrap } from './api.js';
import { language } from './i18n.js';

/**
 * Money and time as the screens show them (docs/screens.md "Money and time"): prices with the venue's currency
 * (the box's `screens.currency`), times in the venue's time zone (the Venue's `timeZone`), whatever the device's
 * own zone: the kitchen ticket prints the venue's time, and a tablet set to another zone must not disagree with it.
 */
const locale = (): string => (language.value === 'en' ? 'en-GB' : 'pl-PL');

const formats = new Map<string, Intl.NumberFormat | Intl.DateTimeFormat>();
function cached<T extends Intl.NumberFormat | Intl.DateTimeFormat>(key: string, make: () => T): T {
  let f = formats.get(key);
  if (!f) {
    f = make();
    formats.set(key, f);
  }
  return f as T;
}

/** The currency of the prices: the bootstrap's, PLN before it is read (the demo's). */
function currency(): string {
  try {
    return bootstrap().currency;
  } catch {
    return 'PLN';
  }
}

/** Money as the box sends it ("18.00"), with its currency, in the language's notation ("18,00 zł", "PLN 18.00"). */
export function money(value: string | undefined): string {
  const n = Number(value ?? '0');
  if (!Number.isFinite(n)) return String(value);
  const code = currency();
  return cached(
    `money:${locale()}:${code}`,
    () => new Intl.NumberFormat(locale(), { style: 'currency', currency: code }),
  ).format(n);
}

/** The sum of the box's money strings, exact (in minor units, as the box adds them), as a money string. */
export function addMoney(...values: string[]): string {
  const minor = values.reduce((sum, v) => sum + Math.round(Number(v) * 100), 0);
  return (minor / 100).toFixed(2);
}

const dateTimeFormat = (timeZone: string, kind: 'dateTime' | 'time') =>
  cached(
    `${kind}:${locale()}:${timeZone}`,
    () =>
      new Intl.DateTimeFormat(locale(), {
        timeZone,
        ...(kind === 'dateTime' ? { dateStyle: 'short' } : {}),
        timeStyle: kind === 'dateTime' ? 'short' : 'medium',
        hourCycle: 'h23',
      }),
  );

/** Date and time of an instant (ISO string) in the venue's time zone. */
export const dateTime = (iso: string, timeZone: string): string =>
  dateTimeFormat(timeZone, 'dateTime').format(new Date(iso));

/** Time of day of an instant in the venue's time zone. */
export const timeOfDay = (iso: string, timeZone: string): string =>
  dateTimeFormat(timeZone, 'time').format(new Date(iso));

/** The offset of `timeZone` from UTC at `ms`, in ms (positive east of Greenwich). */
function offsetAt(ms: number, timeZone: string): number {
  const parts = cached(
    `parts:${timeZone}`,
    () =>
      new Intl.DateTimeFormat('en-US', {
        timeZone,
        hourCycle: 'h23',
        year: 'numeric',
        month: 'numeric',
        day: 'numeric',
        hour: 'numeric',
        minute: 'numeric',
        second: 'numeric',
      }),
  ).formatToParts(new Date(ms));
  const get = (type: string) => Number(parts.find((p) => p.type === type)?.value ?? '0');
  const wall = Date.UTC(get('year'), get('month') - 1, get('day'), get('hour'), get('minute'), get('second'));
  return wall - Math.floor(ms / 1000) * 1000;
}

/**
 * The instant of a wall-clock time in the venue's zone (a `datetime-local` input's "2026-11-27T09:30"), as ISO:
 * staff type the venue's time, whatever zone the device is set to. Twice round the offset, for the hour a
 * daylight-saving change moves.
 */
export function venueTimeToIso(local: string, timeZone: string): string {
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2}))?/.exec(local);
  if (!m) return new Date(local).toISOString();
  const wall = Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +(m[6] ?? '0'));
  let ms = wall - offsetAt(wall, timeZone);
  ms = wall - offsetAt(ms, timeZone);
  return new Date(ms).toISOString();
}
