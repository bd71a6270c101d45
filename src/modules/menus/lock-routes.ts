import { Type } from '@sinclair/typebox';
import { json, type Route } from '../../http/types.js';
import { ProductId, Uuid } from '../../shared/types.js';
import { compile } from '../../shared/validate.js';
import type { ProductLocks } from './locks.js';

export const LockBody = Type.Object({
  venue: Uuid,
  productId: ProductId,
  locked: Type.Boolean(),
  reason: Type.Optional(Type.String({ maxLength: 200 })),
});
const validateLock = compile(LockBody);

/** Staff mark products sold out (and back) per venue. */
export function lockRoutes(locks: ProductLocks, now: () => number): Route[] {
  return [
    {
      method: 'put',
      path: '/menu-api/api/menu/:menu/locks',
      auth: 'write',
      body: 'json',
      handle: ({ req, principal, body }) =>
        json(200, locks.setLock(principal.tenantId, req.params.menu!, validateLock(body), now())),
    },
  ];
}
