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
  return convertAll(node);
}

function convertAll(node: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  // Object.entries leaves out TypeBox's symbol keys ([Kind], [Optional]).
  for (const [key, v] of Object.entries(node)) if (v !== undefined) out[key] = convert(v);
  return out;
}
