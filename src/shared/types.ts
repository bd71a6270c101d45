import { Type } from '@sinclair/typebox';
import { UUID_PATTERN } from './ids.js';

/** Shared request field types: one definition each, used by every module's schemas. */
export const Uuid = Type.String({ pattern: UUID_PATTERN });
export const ItemId = Type.String({ pattern: '^[\\p{L}\\p{N}_.\\-]+$', maxLength: 128 });
export const ShortText = Type.String({ maxLength: 200 });
export const StringMap = Type.Record(Type.String({ maxLength: 100 }), Type.String({ maxLength: 1000 }), {
  maxProperties: 64,
});
export const MAX_ITEMS = 2048;
