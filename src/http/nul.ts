import { invalidField } from '../shared/errors.js';
import type { HttpRequest } from './types.js';

/**
 * Refuses a NUL character in a request's path parameters, query and JSON strings with a 400 `invalidField` naming
 * where it is (the parameter, or the JSON pointer). The central's PostgreSQL cannot store NUL in text and would fail
 * the statement as a 500 (mount.ts `refuseNul`).
 */
export function refuseNul(req: HttpRequest, json: unknown): void {
  const refuse = (where: string) => {
    throw invalidField(where, `${where} contains a NUL character (\\u0000), which the central does not store`);
  };
  for (const [name, value] of Object.entries(req.params)) if (value.includes('\0')) refuse(name);
  for (const [name, value] of req.query) if (value.includes('\0') || name.includes('\0')) refuse(name);
  const walk = (value: unknown, pointer: string): void => {
    if (typeof value === 'string') {
      if (value.includes('\0')) refuse(pointer || '/');
    } else if (Array.isArray(value)) {
      for (const [i, v] of value.entries()) walk(v, `${pointer}/${i}`);
    } else if (value !== null && typeof value === 'object') {
      for (const [k, v] of Object.entries(value)) {
        const at = `${pointer}/${k.replaceAll('~', '~0').replaceAll('/', '~1')}`;
        if (k.includes('\0')) refuse(at);
        walk(v, at);
      }
    }
  };
  walk(json, '');
}
