import type { Static, TSchema } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { type ValueError, ValueErrorType } from '@sinclair/typebox/errors';
import { AppError, type ErrorCode, type ErrorDetail, invalidField, isNonEmpty, problem } from './errors.js';

/** Returns the typed value or throws a 400 naming every offending field by JSON pointer. */
export type Validator<T extends TSchema> = (value: unknown) => Static<T>;

/** At most this many failed fields are named in one 400. */
export const MAX_REPORTED = 20;

/** One failed field of a request body: its JSON pointer leads the message and is the code's argument. */
export const fieldProblem = (path: string, message: string): ErrorDetail<ErrorCode> =>
  problem('invalidField', `${path}: ${message}`, [path]);

/** The 400 of a body whose fields failed validation. */
export const validationError = (codes: [ErrorDetail<ErrorCode>, ...ErrorDetail<ErrorCode>[]]): AppError =>
  AppError.ofAll('request failed validation', codes);

/** Compiles a schema once (cheap checks on a Pi) and reports failures as `invalidField` codes. */
export function compile<T extends TSchema>(schema: T): Validator<T> {
  const check = TypeCompiler.Compile(schema);
  return (value: unknown) => {
    if (check.Check(value)) return value;
    const codes: ErrorDetail<ErrorCode>[] = [];
    const seen = new Set<string>();
    for (const error of precise(check.Errors(value))) {
      const path = error.path === '' ? '/' : error.path;
      if (seen.has(path)) continue;
      seen.add(path);
      codes.push(fieldProblem(path, error.message));
      if (codes.length >= MAX_REPORTED) break;
    }
    // A failed Check always yields an error; the fallback only keeps the type honest.
    throw validationError(isNonEmpty(codes) ? codes : [fieldProblem('/', 'invalid value')]);
  };
}

/** Variants of a union compared at most this deep, so a hostile body cannot make the report expensive. */
const MAX_VARIANT_ERRORS = 50;

/**
 * The errors with each failed union replaced by the errors of its closest variant (strictly fewer errors than every
 * other), so a menu product with a bad price is reported at `/root/items/0/items/1/price`, not as "/root/items/0:
 * Expected union value": a form can then show the message next to the field it names (docs/console.md "How it
 * behaves"). A union with no closest variant (`orderType` against its literals) keeps its own error.
 */
function* precise(errors: Iterable<ValueError>): Generator<ValueError> {
  for (const error of errors) {
    const best = error.type === ValueErrorType.Union ? closestVariant(error) : undefined;
    if (best) yield* precise(best);
    else yield error;
  }
}

function closestVariant(union: ValueError): ValueError[] | undefined {
  const counted = union.errors.map((variant) => {
    const found: ValueError[] = [];
    for (const e of variant) {
      found.push(e);
      if (found.length >= MAX_VARIANT_ERRORS) break;
    }
    return found;
  });
  const sizes = counted.map((c) => c.length).sort((a, b) => a - b);
  const best = counted.find((c) => c.length === sizes[0]);
  // A tie says nothing about which variant was meant; errors only at the union's own path add nothing to it; and a
  // variant whose own tag (a literal field: `kind`) does not match was not the one meant either.
  if (!best || best.length === 0 || sizes[0] === sizes[1]) return undefined;
  const tagMismatch = best.some(
    (e) => e.type === ValueErrorType.Literal && e.path.slice(0, e.path.lastIndexOf('/')) === union.path,
  );
  return !tagMismatch && best.some((e) => e.path !== union.path) ? best : undefined;
}

/** Parses a JSON text; malformed JSON is a 400 `invalidBody`. */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw AppError.of('invalidBody', 'body is not valid JSON');
  }
}

/**
 * A number written in JSON's syntax (RFC 8259 section 6, a leading '+' and a bare leading or trailing '.' also
 * taken): any count of decimals and an exponent (`5.2e1`), as clients that print doubles send them. Number()
 * alone would also take "0x10", "Infinity", " 5" or ""; those, and anything that overflows to Infinity, give NaN.
 */
export function decimalNumber(text: string): number {
  if (text.length > 400 || !/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(text)) return Number.NaN;
  const value = Number(text);
  return Number.isFinite(value) ? value : Number.NaN;
}

/** The `limit` query parameter of a list: an integer from 1 to `max`, `fallback` when absent; else a 400. */
export function limitOf(query: URLSearchParams, fallback: number, max: number): number {
  const limit = query.get('limit');
  if (limit === null) return fallback;
  const n = /^\d{1,4}$/.test(limit) ? Number(limit) : Number.NaN;
  if (!(n >= 1 && n <= max)) throw invalidField('limit', `limit must be an integer from 1 to ${max}`);
  return n;
}

/** An id-like query parameter: absent (unless `required`), or 1 to 64 characters; else a 400 naming it. */
export function idParam(query: URLSearchParams, name: string, required = false): string | undefined {
  const value = query.get(name);
  if (value === null && !required) return undefined;
  if (value === null || value.length === 0 || value.length > 64) throw invalidField(name, `${name} must be an id`);
  return value;
}
