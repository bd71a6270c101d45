import { invalidField } from '../shared/errors.js';
import type { HttpRequest } from './types.js';

/** A UTF-16 surrogate without its other half: no character, so it has no UTF-8 (or JSON text PostgreSQL takes). */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Why PostgreSQL cannot store `text`, or undefined when it can. */
function unstorable(text: string): string | undefined {
  if (text.includes('\0')) return 'a NUL character (\\u0000)';
  if (LONE_SURROGATE.test(text)) return 'a lone UTF-16 surrogate (\\ud800-\\udfff without its pair)';
  return undefined;
}

/**
 * Refuses text the central's PostgreSQL cannot store, in a request's path parameters, query and JSON strings (and
 * JSON keys), with a 400 `invalidField` naming where it is (the parameter, or the JSON pointer): a NUL, which
 * `text` and `jsonb` refuse, and a lone surrogate (a JSON `"\ud800"`), which `jsonb` refuses as invalid JSON and
 * `text` would store as U+FFFD. Either would otherwise fail the statement as a 500 (mount.ts `refuseNul`; the
 * box on SQLite keeps what it is given). docs/sync.md "API" says which.
 */
export function refuseNul(req: HttpRequest, json: unknown): void {
  const check = (where: string, text: string) => {
    const what = unstorable(text);
    if (what) throw invalidField(where, `${where} contains ${what}, which the central does not store`);
  };
  for (const [name, value] of Object.entries(req.params)) check(name, value);
  for (const [name, value] of req.query) {
    check(name, name);
    check(name, value);
  }
  const walk = (value: unknown, pointer: string): void => {
    if (typeof value === 'string') {
      check(pointer || '/', value);
    } else if (Array.isArray(value)) {
      for (const [i, v] of value.entries()) walk(v, `${pointer}/${i}`);
    } else if (value !== null && typeof value === 'object') {
      for (const [k, v] of Object.entries(value)) {
        const at = `${pointer}/${k.replaceAll('~', '~0').replaceAll('/', '~1')}`;
        check(at, k);
        walk(v, at);
      }
    }
  };
  walk(json, '');
}
