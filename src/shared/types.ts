import { Type } from '@sinclair/typebox';

/** Shared request field types: one definition each, used by every module's schemas. */
export const UUID_PATTERN = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';
export const Uuid = Type.String({ pattern: UUID_PATTERN });
// TypeBox compiles a string `pattern` without the `u` flag, so `\p{L}` would match a literal "p{L}":
// a RegExp schema keeps the flag.
export const ItemId = Type.RegExp(/^[\p{L}\p{N}_.-]+$/u, { maxLength: 128 });
/** A map of strings with 1..100-character keys (TypeBox ignores maxLength on a Record key, so a pattern). */
export const StringMap = Type.Record(Type.String({ pattern: '^.{1,100}$' }), Type.String({ maxLength: 1000 }), {
  maxProperties: 64,
  additionalProperties: false,
});
export const MAX_ITEMS = 2048;
/** A product id, as menus define it and order lines and sold-out locks name it. */
export const ProductId = Type.String({ minLength: 1, maxLength: 100 });
/** A price as provisioning gives it ("12.50"): whole units and at most two decimals, never negative. */
export const Price = Type.String({ pattern: '^\\d{1,9}(\\.\\d{1,2})?$' });
