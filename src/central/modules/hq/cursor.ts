import { invalidField } from '../../../shared/errors.js';

/**
 * Keyset cursors: the last item's sort key, opaque to clients (base64url JSON). The timestamp travels as
 * PostgreSQL's own text, so the next page compares with full microsecond precision.
 */
export const encodeCursor = (at: string, id: string): string => Buffer.from(JSON.stringify([at, id])).toString('base64url');

export function decodeCursor(text: string | null): { at: string; id: string } | undefined {
  if (text === null) return undefined;
  try {
    const value = JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as unknown;
    if (Array.isArray(value) && value.length === 2 && value.every((v) => typeof v === 'string')) {
      const [at, id] = value as [string, string];
      // PostgreSQL's timestamptz text: checked here so a forged cursor is a 400, not a cast error (a 500).
      if (/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(\.\d{1,6})?[+-]\d\d(:\d\d)?$/.test(at) && id.length <= 64) return { at, id };
    }
  } catch {
    // fall through to the 400
  }
  throw invalidField('after', 'after is not a cursor this API gave out');
}
