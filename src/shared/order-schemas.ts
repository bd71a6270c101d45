/**
 * A new order's body as the box validates it (README "Order commands"): one file for the box's ordering API and
 * for orders created at the central for a venue's box (README "Orders created at the central").
 */
import { type Static, Type } from '@sinclair/typebox';
import { ProductId, StringMap, Uuid } from './types.js';

export const ORDER_TYPES = ['DELIVERY', 'TAKE_AWAY', 'DINE_IN_OPEN', 'DINE_IN'] as const;
export type OrderType = (typeof ORDER_TYPES)[number];

export const MAX_LINES_PER_COMMAND = 200;

export const MAX_NOTE_CHARS = 140;
const LineNote = Type.RegExp(new RegExp(`^[^\\p{Cc}]{1,${MAX_NOTE_CHARS}}$`, 'u'));

export const LineInput = Type.Object({
  productId: ProductId,
  /** The client's idea of the price: ignored, the menu's price is used. */
  price: Type.Optional(Type.Number()),
  quantity: Type.Integer({ minimum: 1, maximum: 999 }),
  status: Type.Optional(Type.Literal('NEW')),
  /**
   * `note`: a kitchen note, 1 to 140 characters (code points, so an emoji counts once), no control characters
   * (the note goes to an ESC/POS printer, where those would be printer commands). README "Kitchen tickets".
   */
  extra: Type.Optional(Type.Object({ note: Type.Optional(LineNote) }, { additionalProperties: false })),
});
export type LineInput = Static<typeof LineInput>;

export const Lines = Type.Array(LineInput, { maxItems: MAX_LINES_PER_COMMAND });

export const Contact = Type.Object({
  name: Type.Optional(Type.String({ maxLength: 200 })),
  phone: Type.Optional(Type.String({ maxLength: 50 })),
  email: Type.Optional(Type.String({ maxLength: 200 })),
});

export const NewOrderBody = Type.Object({
  orderType: Type.Union(ORDER_TYPES.map((t) => Type.Literal(t))),
  buckets: Type.Array(Type.Object({ venue: Uuid, lines: Type.Optional(Lines) }), { minItems: 1, maxItems: 8 }),
  contact: Type.Optional(Contact),
  extra: Type.Optional(StringMap),
});
export type NewOrderBody = Static<typeof NewOrderBody>;
