import { Type } from '@sinclair/typebox';
import { json, type Route } from '../../http/types.js';
import { ProductId, Uuid } from '../../shared/types.js';
import { compile } from '../../shared/validate.js';
import type { SoldOutFlags } from './sold-out.js';

export const SoldOutBody = Type.Object({
  venue: Uuid,
  productId: ProductId,
  locked: Type.Boolean(),
  reason: Type.Optional(Type.String({ maxLength: 200 })),
});
const validateSoldOut = compile(SoldOutBody);

/** One sold-out product of a venue, as the menu's `locks` array lists it. */
export const SoldOutEntrySchema = Type.Object({
  productId: Type.String(), venue: Type.String(), reason: Type.String(), since: Type.String({ format: 'date-time' }),
}, { additionalProperties: false });

const SoldOutStateSchema = Type.Object({
  productId: Type.String(), venue: Type.String(), locked: Type.Boolean(),
  reason: Type.Union([Type.String(), Type.Null()]), since: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
}, { additionalProperties: false });

/** Staff mark products sold out (and back) per venue. */
export function soldOutRoutes(soldOut: SoldOutFlags, now: () => number): Route[] {
  return [
    {
      method: 'put',
      path: '/menu-api/api/menu/:menu/locks',
      auth: 'write',
      body: 'json',
      doc: {
        summary: 'Mark a product sold out at one venue, or back (staff)',
        params: { menu: "the venue's menu" },
        request: SoldOutBody,
        responses: { 200: { description: 'the flag as it now is', schema: SoldOutStateSchema } },
      },
      handle: ({ req, principal, body }) =>
        json(200, soldOut.set(principal.tenantId, req.params.menu!, validateSoldOut(body), now())),
    },
  ];
}
