import { type Static, Type } from '@sinclair/typebox';
import { LineInput, MAX_LINES_PER_COMMAND, type OrderType } from '../../shared/order-schemas.js';
import { Uuid } from '../../shared/types.js';
import type { Channel } from '../venues/schemas.js';

// A new order's body is validated by one shared file: the central checks orders it creates with it too.
export {
  LineInput,
  MAX_LINES_PER_COMMAND,
  MAX_NOTE_CHARS,
  NewOrderBody,
  ORDER_TYPES,
  type OrderType,
} from '../../shared/order-schemas.js';

/** The menu channel an order type is sold on. */
export const channelOf = (type: OrderType): Channel =>
  type === 'DELIVERY' ? 'DELIVERY' : type === 'TAKE_AWAY' ? 'TAKE_AWAY' : 'DINE_IN';

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
    minItems: 1,
    maxItems: MAX_LINES_PER_COMMAND,
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
