import { invalidField } from '../../../shared/errors.js';

/**
 * Keyset cursors: the last item's sort key, opaque to clients (base64url JSON). The timestamp travels as
 * PostgreSQL's own text in UTC (`YYYY-MM-DD HH:MM:SS[.ffffff]+00`, repo.ts), so the next page compares with full
 * microsecond precision. The ingest keeps those dates to years 2000-9999 (devices/box-clock.ts), so every cursor handed out decodes.
 */
export const encodeCursor = (at: string, id: string): string =>
  Buffer.from(JSON.stringify([at, id])).toString('base64url');

const TIMESTAMP = /^(\d{4})-(\d\d)-(\d\d) (\d\d):(\d\d):(\d\d)(\.\d{1,6})?([+-])(\d\d)(?::(\d\d))?$/;

const DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
const isLeap = (year: number): boolean => (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;

/**
 * A timestamp PostgreSQL's timestamptz cast accepts, checked field by field: a forged cursor is a 400, never a
 * cast error (a 500). Years 0001-9999 (PostgreSQL has no year 0), offsets up to 15:59 as PostgreSQL allows.
 */
function isTimestamp(text: string): boolean {
  const m = TIMESTAMP.exec(text);
  if (!m) return false;
  const n = (i: number) => Number(m[i] ?? '0');
  const [year, month, day] = [n(1), n(2), n(3)];
  if (year < 1 || month < 1 || month > 12 || day < 1) return false;
  if (day > DAYS[month - 1]! + (month === 2 && isLeap(year) ? 1 : 0)) return false;
  return n(4) <= 23 && n(5) <= 59 && n(6) <= 59 && n(9) <= 15 && n(10) <= 59;
}

export function decodeCursor(text: string | null): { at: string; id: string } | undefined {
  if (text === null) return undefined;
  try {
    const value = JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as unknown;
    if (Array.isArray(value) && value.length === 2 && value.every((v) => typeof v === 'string')) {
      const [at, id] = value as [string, string];
      if (isTimestamp(at) && id.length <= 64 && !id.includes('\u0000')) return { at, id };
    }
  } catch {
    // fall through to the 400
  }
  throw invalidField('after', 'after is not a cursor this API gave out');
}
