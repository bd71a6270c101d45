import { zonedFormat } from '../../shared/clock.js';
import { type ChannelConstraint, DAYS, type Day } from './schemas.js';

const formatterFor = zonedFormat('en-GB', { weekday: 'short', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' });

/** The last answer per time zone: every command asks for the same minute, and Intl's formatting costs tens of us. */
const lastLocalTime = new Map<string, { minute: number; local: { day: Day; minutes: number } }>();

/**
 * Day of week and minutes since midnight of an instant in an IANA time zone. Every zone's offset is a whole
 * number of minutes, so the answer is the same for a whole UTC minute.
 */
export function localTime(ms: number, timeZone: string): { day: Day; minutes: number } {
  const minute = Math.floor(ms / 60_000);
  const last = lastLocalTime.get(timeZone);
  if (last?.minute === minute) return last.local;
  const local = formatLocalTime(ms, timeZone);
  lastLocalTime.set(timeZone, { minute, local });
  return local;
}

function formatLocalTime(ms: number, timeZone: string): { day: Day; minutes: number } {
  const parts = formatterFor(timeZone).formatToParts(new Date(ms));
  const get = (type: string): string => parts.find((p) => p.type === type)?.value ?? '';
  const day = get('weekday').toUpperCase().slice(0, 3) as Day;
  if (!DAYS.includes(day)) throw new RangeError(`cannot read the weekday in ${timeZone}`);
  return { day, minutes: Number(get('hour')) * 60 + Number(get('minute')) };
}

const toMinutes = (hhmm: string): number => {
  const [h, m] = hhmm.split(':');
  return Number(h) * 60 + Number(m);
};

/** True when the channel is active and the venue's local time falls in one of the day's intervals. */
export function isOpen(constraint: ChannelConstraint | undefined, timeZone: string, ms: number): boolean {
  if (!constraint?.active) return false;
  const { day, minutes } = localTime(ms, timeZone);
  return (
    constraint.week[day].some((i) => {
      const from = toMinutes(i.from);
      const to = toMinutes(i.to);
      // An interval that ends before it starts runs past midnight: 22:00-02:00 is open at 23:00 that day.
      return from <= to ? minutes >= from && minutes < to : minutes >= from;
    }) || openFromPreviousDay(constraint, day, minutes)
  );
}

function openFromPreviousDay(constraint: ChannelConstraint, day: Day, minutes: number): boolean {
  const previous = DAYS[(DAYS.indexOf(day) + 6) % 7]!;
  return constraint.week[previous].some((i) => toMinutes(i.to) < toMinutes(i.from) && minutes < toMinutes(i.to));
}
