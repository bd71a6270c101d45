import type { Static, TSchema } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { AppError, type ErrorDetail, invalidField } from './errors.js';

export interface Validator<T extends TSchema> {
  /** Returns the typed value or throws a 400 naming every offending field by JSON pointer. */
  (value: unknown): Static<T>;
}

const MAX_REPORTED = 20;

/** Compiles a schema once (cheap checks on a Pi) and reports failures as `invalidField` codes. */
export function compile<T extends TSchema>(schema: T): Validator<T> {
  const check = TypeCompiler.Compile(schema);
  return (value: unknown) => {
    if (check.Check(value)) return value;
    const codes: ErrorDetail[] = [];
    const seen = new Set<string>();
    for (const error of check.Errors(value)) {
      const path = error.path === '' ? '/' : error.path;
      if (seen.has(path)) continue;
      seen.add(path);
      codes.push({ code: 'invalidField', message: `${path}: ${error.message}`, args: [path] });
      if (codes.length >= MAX_REPORTED) break;
    }
    throw new AppError(400, 'request failed validation', codes);
  };
}

/** Parses a JSON text; malformed JSON is a 400 `invalidBody`. */
export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw AppError.of('invalidBody', 'body is not valid JSON');
  }
}

/** The `limit` query parameter of a list: an integer from 1 to `max`, `fallback` when absent; else a 400. */
export function limitOf(query: URLSearchParams, fallback: number, max: number): number {
  const limit = query.get('limit');
  if (limit === null) return fallback;
  const n = /^\d{1,4}$/.test(limit) ? Number(limit) : Number.NaN;
  if (!(n >= 1 && n <= max)) throw invalidField('limit', `limit must be an integer from 1 to ${max}`);
  return n;
}
