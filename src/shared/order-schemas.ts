import { type Static, Type } from '@sinclair/typebox';

/**
 * The Order as the box answers it (GET order/{id}, the staff list) and pushes it (ORDER_CHANGE): README "The
 * order lifecycle", "Order commands". One schema for /openapi.json, /asyncapi.json and the type the ordering
 * module builds (src/modules/ordering/order-view.ts).
 */
const Money = Type.String({ pattern: '^-?\\d+\\.\\d{2}$', description: 'an amount with two decimals, "36.00"' });
const Instant = Type.String({ format: 'date-time' });

export const OrderLine = Type.Object({
  id: Type.String(),
  creator: Type.String(),
  created: Instant,
  updated: Instant,
  source: Type.String(),
  quantity: Type.Integer(),
  price: Money,
  productId: Type.String(),
  product: Type.Unknown({ description: "the product as the menu sold it (a snapshot taken when the line was priced)" }),
  status: Type.String({ enum: ['NEW', 'ORDERED', 'CANCELLED'] }),
  hash: Type.String({ description: 'changes when the line changes (product, quantity, price, status)' }),
  /** The kitchen note, only on lines that have one (README "Kitchen tickets"). */
  extra: Type.Optional(Type.Object({ note: Type.String() }, { additionalProperties: false })),
}, { additionalProperties: false });

export const OrderBucket = Type.Object({
  venue: Type.String(),
  name: Type.String(),
  menu: Type.String(),
  lines: Type.Array(OrderLine),
  extra: Type.Object({ minDeliveryMinutes: Type.String(), minDeliveryTime: Type.String(), minOrderValue: Money },
    { additionalProperties: false }),
}, { additionalProperties: false });

export const Order = Type.Object({
  tenant: Type.String(),
  id: Type.String(),
  created: Instant,
  lastChanged: Instant,
  source: Type.String(),
  users: Type.Array(Type.Object({ userId: Type.String(), roles: Type.Array(Type.String()) }, { additionalProperties: false })),
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
}, { additionalProperties: false, description: 'an order: its buckets (one per venue) with their lines' });
export type Order = Static<typeof Order>;
