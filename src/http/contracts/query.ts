import { type Static, type TSchema, Type } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { ValueErrorType } from '@sinclair/typebox/errors';
import { invalidField } from '../../shared/errors.js';
import { decimalNumber } from '../../shared/validate.js';

/**
 * A route's `schema.query` as its check (docs/api.md "Contracts: /openapi.json and /asyncapi.json"): the object
 * /openapi.json documents the parameters with is the one that checks them, as `schema.body` is for bodies, so a
 * request the document allows is never a 400 and one it does not is. Query values arrive as text; each is
 * coerced to its property's type first: a number in JSON's syntax (`decimalNumber`: `5.00614e1`, never `0x10`), an
 * integer of digits, an array from a comma-separated list (OpenAPI's `style: form, explode: false`). A value that
 * does not coerce stays text and fails the type. Parameters the schema does not name are ignored.
 */
export type QueryValidator<Q extends TSchema = TSchema> = (query: URLSearchParams) => Static<Q>;

type Node = {
  type?: string;
  properties?: Record<string, Node>;
  required?: string[];
  items?: Node;
  anyOf?: Node[];
  const?: unknown;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  description?: string;
};

/** The JSON Schema types a query parameter can carry (an array: of strings, comma-separated); RegExp is text. */
const SCALARS = new Set(['string', 'number', 'integer', 'RegExp']);

/** Compiled once per schema object, at mount: a schema TypeBox cannot compile, or a query cannot carry, fails the start. */
const compiled = new WeakMap<TSchema, QueryValidator>();

export function queryValidator<Q extends TSchema>(schema: Q): QueryValidator<Q> {
  const known = compiled.get(schema);
  if (known) return known as QueryValidator<Q>;
  const node = schema as unknown as Node;
  if (node.type !== 'object' || !node.properties) throw new Error('a query schema is an object of parameters');
  const properties = Object.entries(node.properties);
  for (const [name, prop] of properties) {
    const type = typeOf(prop);
    if (!(type && (SCALARS.has(type) || (type === 'array' && typeOf(prop.items ?? {}) === 'string'))))
      throw new Error(`query parameter ${name} has a type a query string cannot carry`);
  }
  const check = TypeCompiler.Compile(schema);
  const validator: QueryValidator<Q> = (query) => {
    const value: Record<string, unknown> = {};
    for (const [name, prop] of properties) {
      const text = query.get(name);
      if (text !== null) value[name] = coerce(prop, text);
    }
    if (check.Check(value)) return value as Static<Q>;
    // One parameter named, as the handlers named them one at a time before: a missing required one first (TypeBox
    // reports those first), else the first invalid one in the schema's order.
    const error = check.Errors(value).First();
    const name = (error?.path ?? '').split('/')[1]?.replaceAll('~1', '/').replaceAll('~0', '~') ?? '';
    const prop = node.properties?.[name];
    if (!error || !prop) throw invalidField(name || 'query', 'the query is invalid');
    if (error.type === ValueErrorType.ObjectRequiredProperty && !(name in value))
      throw invalidField(name, `query parameter ${name} is required: ${expectation(prop)}`);
    throw invalidField(name, `query parameter ${name} must be ${expectation(prop)}`);
  };
  compiled.set(schema, validator as QueryValidator);
  return validator;
}

/** The type a property's values have: its own, or the one all its variants share (a union of string literals). */
function typeOf(prop: Node): string | undefined {
  if (prop.type) return prop.type;
  const types = new Set(prop.anyOf?.map(typeOf));
  return types.size === 1 ? [...types][0] : undefined;
}

function coerce(prop: Node, text: string): unknown {
  switch (typeOf(prop)) {
    case 'number': {
      const n = decimalNumber(text);
      return Number.isNaN(n) ? text : n;
    }
    case 'integer':
      return /^-?\d{1,15}$/.test(text) ? Number(text) : text;
    case 'array':
      return text.split(',').map((part) => part.trim());
    default:
      return text;
  }
}

/** What a parameter must be, from its schema: the message of its 400. */
function expectation(prop: Node): string {
  const type = typeOf(prop);
  const values = (p: Node) => p.anyOf?.map((v) => String(v.const)).join(', ');
  if (type === 'number' || type === 'integer') {
    const what = type === 'number' ? 'a number' : 'an integer';
    if (prop.minimum !== undefined && prop.maximum !== undefined)
      return `${what} from ${prop.minimum} to ${prop.maximum}`;
    if (prop.minimum !== undefined) return `${what} of at least ${prop.minimum}`;
    return what;
  }
  if (type === 'array') return `one or more of ${values(prop.items ?? {}) ?? 'its values'}, separated by commas`;
  if (prop.anyOf) return `one of ${values(prop)}`;
  if (prop.minLength !== undefined && prop.maxLength !== undefined)
    return `${prop.minLength} to ${prop.maxLength} characters`;
  return prop.description ?? 'as /openapi.json describes it';
}

/** A list's `limit`: an integer from 1 to `max`, `fallback` when absent (its `default`, for the document). */
export const LimitParam = (fallback: number, max: number) =>
  Type.Optional(
    Type.Integer({ minimum: 1, maximum: max, default: fallback, description: `1 to ${max} (default ${fallback})` }),
  );

/** One of a closed list of values: a union of literals, which /openapi.json shows as an `enum`. */
export const OneOf = <T extends string>(values: readonly T[], description?: string) =>
  Type.Union(
    values.map((v) => Type.Literal(v)),
    description === undefined ? {} : { description },
  );

/** Several of a closed list, comma-separated in one parameter (`status=ORDERED,READY`: OpenAPI's explode: false). */
export const ListOf = <T extends string>(values: readonly T[], description: string) =>
  Type.Array(OneOf(values), { minItems: 1, description });

/** A venue-local date `YYYY-MM-DD` of years 2000-9999 (docs/sync.md "HQ reports and order search"). */
export const LocalDateParam = (description: string) =>
  Type.String({ pattern: '^[2-9]\\d{3}-(0[1-9]|1[0-2])-(0[1-9]|[12]\\d|3[01])$', description });

/** A rev or seq in a query: at most 15 digits, the sync protocol's counters (exact as JSON numbers). */
export const MAX_COUNTER = 999_999_999_999_999;
