import { Type } from '@sinclair/typebox';
import { json, type Route, route } from '../../http/types.js';
import { ProductId, Uuid } from '../../shared/types.js';
import type { SoldOutFlags } from './sold-out.js';

export const SoldOutBody = Type.Object({
  venue: Uuid,
  productId: ProductId,
  locked: Type.Boolean(),
  reason: Type.Optional(Type.String({ maxLength: 200 })),
});

/** One sold-out product of a venue, as the menu's `locks` array lists it. */
export const SoldOutEntrySchema = Type.Object(
  {
    productId: Type.String(),
    venue: Type.String(),
    reason: Type.String(),
    since: Type.String({ format: 'date-time' }),
  },
  { additionalProperties: false },
);

const SoldOutStateSchema = Type.Object(
  {
    productId: Type.String(),
    venue: Type.String(),
    locked: Type.Boolean(),
    reason: Type.Union([Type.String(), Type.Null()]),
    since: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  },
  { additionalProperties: false },
);

/** Staff mark products sold out (and back) per venue. */
export function soldOutRoutes(soldOut: SoldOutFlags, now: () => number): Route[] {
  return [
    route({
      method: 'put',
      path: '/menu-api/api/menu/:menu/locks',
      auth: 'write',
      body: 'json',
      schema: { body: SoldOutBody },
      doc: {
        operationId: 'setProductSoldOut',
        summary: 'Mark a product sold out at one venue, or back (staff)',
        params: { menu: "the venue's menu" },
        responses: { 200: { description: 'the flag as it now is', schema: SoldOutStateSchema } },
      },
      handle: ({ req, principal, valid }) =>
        json(200, soldOut.set(principal.tenantId, req.params.menu!, valid(), now())),
    }),
  ];
}
