/**
 * The order's schemas, in and out: a new order's body as the box validates it (docs/api.md "Order commands"; the
 * central checks the orders it creates for a venue's box with it too, docs/sync.md "Orders created at the central"),
 * and the Order the box answers and pushes.
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
   * (the note goes to an ESC/POS printer, where those would be printer commands). docs/orders.md "Kitchen tickets".
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

/**
 * The Order as the box answers it (GET order/{id}, the staff list) and pushes it (ORDER_CHANGE): docs/orders.md "The
 * order lifecycle", "Order commands". One schema for /openapi.json, /asyncapi.json and the type the ordering
 * module builds (src/modules/ordering/order-view.ts).
 */
const Money = Type.String({ pattern: '^-?\\d+\\.\\d{2}$', description: 'an amount with two decimals, "36.00"' });
const Instant = Type.String({ format: 'date-time' });

export const OrderLine = Type.Object(
  {
    id: Type.String(),
    creator: Type.String(),
    created: Instant,
    updated: Instant,
    source: Type.String(),
    quantity: Type.Integer(),
    price: Money,
    productId: Type.String(),
    product: Type.Unknown({
      description: 'the product as the menu sold it (a snapshot taken when the line was priced)',
    }),
    status: Type.String({ enum: ['NEW', 'ORDERED', 'CANCELLED'] }),
    hash: Type.String({ description: 'changes when the line changes (product, quantity, price, status)' }),
    /** The kitchen note, only on lines that have one (docs/orders.md "Kitchen tickets"). */
    extra: Type.Optional(Type.Object({ note: Type.String() }, { additionalProperties: false })),
  },
  { additionalProperties: false },
);

export const OrderBucket = Type.Object(
  {
    venue: Type.String(),
    name: Type.String(),
    menu: Type.String(),
    lines: Type.Array(OrderLine),
    extra: Type.Object(
      { minDeliveryMinutes: Type.String(), minDeliveryTime: Type.String(), minOrderValue: Money },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);

export const Order = Type.Object(
  {
    tenant: Type.String(),
    id: Type.String(),
    created: Instant,
    lastChanged: Instant,
    source: Type.String(),
    users: Type.Array(
      Type.Object({ userId: Type.String(), roles: Type.Array(Type.String()) }, { additionalProperties: false }),
    ),
    orderType: Type.String({ enum: ['DELIVERY', 'TAKE_AWAY', 'DINE_IN_OPEN', 'DINE_IN'] }),
    total: Money,
    editTotal: Money,
    status: Type.String({ enum: ['NEW', 'ORDERED', 'READY', 'COMPLETED', 'CANCELLED'] }),
    claimCode: Type.String(),
    buckets: Type.Array(OrderBucket),
    closed: Type.Boolean(),
    completed: Type.Boolean(),
    /** The contact sent with `new`, only on orders that have one; never in the copy sent to the central. */
    contact: Type.Optional(Type.Record(Type.String(), Type.String())),
  },
  { additionalProperties: false, description: 'an order: its buckets (one per venue) with their lines' },
);
export type Order = Static<typeof Order>;
