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

/** Staff mark products sold out (and back) per venue. */
export function soldOutRoutes(soldOut: SoldOutFlags, now: () => number): Route[] {
  return [
    {
      method: 'put',
      path: '/menu-api/api/menu/:menu/locks',
      auth: 'write',
      body: 'json',
      handle: ({ req, principal, body }) =>
        json(200, soldOut.set(principal.tenantId, req.params.menu!, validateSoldOut(body), now())),
    },
  ];
}
