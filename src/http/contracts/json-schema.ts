import type { TSchema } from '@sinclair/typebox';

/**
 * A TypeBox schema as plain JSON Schema (2020-12, what OpenAPI 3.1 and AsyncAPI 3 take): TypeBox's symbols
 * dropped, and its RegExp kind (which keeps the `u` flag for `\p{L}`, src/shared/types.ts) written as a string
 * with a `pattern` (JSON Schema patterns are ECMA-262 regular expressions, read with the `u` flag by validators
 * such as ajv).
 */
export function jsonSchema(schema: TSchema | undefined): Record<string, unknown> {
  if (schema === undefined) return {};
  return convert(schema) as Record<string, unknown>;
}

function convert(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(convert);
  if (value === null || typeof value !== 'object') return value;
  const node = value as Record<string, unknown>;
  if (node.type === 'RegExp' && typeof node.source === 'string') {
    const { type: _type, source, flags: _flags, ...rest } = node;
    return { ...convertAll(rest), type: 'string', pattern: source };
  }
  // A union of string literals is an `enum`, which generators make a union type of (`'DINE_IN' | 'TAKE_AWAY'`).
  const variants = node.anyOf;
  if (Array.isArray(variants) && variants.length > 0 && variants.every(isStringLiteral)) {
    const { anyOf: _anyOf, ...rest } = node;
    return { ...convertAll(rest), type: 'string', enum: variants.map((v) => (v as { const: string }).const) };
  }
  return convertAll(node);
}

function convertAll(node: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  // Object.entries leaves out TypeBox's symbol keys ([Kind], [Optional]).
  for (const [key, v] of Object.entries(node)) if (v !== undefined) out[key] = convert(v);
  return out;
}

/** `{type: 'string', const: 'X'}` and nothing else (TypeBox's own symbol keys aside). */
function isStringLiteral(value: unknown): boolean {
  if (value === null || typeof value !== 'object') return false;
  const { type, const: constant, ...rest } = value as Record<string, unknown>;
  return type === 'string' && typeof constant === 'string' && Object.keys(rest).length === 0;
}
