import { type Static, Type } from '@sinclair/typebox';
import { ProductId, StringMap, Uuid } from '../../shared/types.js';
import type { Channel } from '../venues/schemas.js';

export const ORDER_TYPES = ['DELIVERY', 'TAKE_AWAY', 'DINE_IN_OPEN', 'DINE_IN'] as const;
export type OrderType = (typeof ORDER_TYPES)[number];

/** The menu channel an order type is sold on. */
export const channelOf = (type: OrderType): Channel =>
  type === 'DELIVERY' ? 'DELIVERY' : type === 'TAKE_AWAY' ? 'TAKE_AWAY' : 'DINE_IN';

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

const Lines = Type.Array(LineInput, { maxItems: MAX_LINES_PER_COMMAND });

export const NewOrderBody = Type.Object({
  orderType: Type.Union(ORDER_TYPES.map((t) => Type.Literal(t))),
  buckets: Type.Array(Type.Object({ venue: Uuid, lines: Type.Optional(Lines) }), { minItems: 1, maxItems: 8 }),
  contact: Type.Optional(
    Type.Object({
      name: Type.Optional(Type.String({ maxLength: 200 })),
      phone: Type.Optional(Type.String({ maxLength: 50 })),
      email: Type.Optional(Type.String({ maxLength: 200 })),
    }),
  ),
  extra: Type.Optional(StringMap),
});
export type NewOrderBody = Static<typeof NewOrderBody>;

export const AppendBody = Type.Object({
  venue: Uuid,
  lines: Type.Array(LineInput, { minItems: 1, maxItems: MAX_LINES_PER_COMMAND }),
});
export type AppendBody = Static<typeof AppendBody>;

export const ORDER_STATUSES = ['NEW', 'ORDERED', 'READY', 'COMPLETED', 'CANCELLED'] as const;
export type OrderStatus = (typeof ORDER_STATUSES)[number];

export const UpdateBody = Type.Object({
  venue: Uuid,
  lines: Type.Array(Type.Object({ id: Uuid, quantity: LineInput.properties.quantity }), {
    minItems: 1, maxItems: MAX_LINES_PER_COMMAND,
  }),
});
export type UpdateBody = Static<typeof UpdateBody>;

export const RemoveBody = Type.Object({
  venue: Uuid,
  lines: Type.Array(Uuid, { minItems: 1, maxItems: MAX_LINES_PER_COMMAND }),
});
export type RemoveBody = Static<typeof RemoveBody>;

/** `submit` and `ready` take `{}` (or no body at all). */
export const EmptyBody = Type.Object({});

export const CompleteBody = Type.Object({ claimCode: Type.String({ pattern: '^\\d{6}$' }) });
export type CompleteBody = Static<typeof CompleteBody>;

export const CancelBody = Type.Object({ reason: Type.Optional(Type.String({ maxLength: 200 })) });
export type CancelBody = Static<typeof CancelBody>;
