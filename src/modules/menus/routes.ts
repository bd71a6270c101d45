import { Type } from '@sinclair/typebox';
import { OneOf } from '../../http/contracts/query.js';
import { json, type Route, route } from '../../http/types.js';
import { UUID_PATTERN } from '../../shared/types.js';
import { SoldOutEntrySchema } from './sold-out-routes.js';
import { CHANNELS } from '../venues/schemas.js';
import type { MenuService } from './service.js';

/**
 * A node of the menu tree: a category (`svc/group/category`, with `items`) or a product (`svc/product`, with its
 * price; `soldOut: true` while sold out at the venue). Written loosely: the tree is recursive, and the catalogue's
 * own schema (src/shared/catalogue-schemas.ts) checks it where it comes in.
 */
const MenuNodeSchema = Type.Object({
  kind: Type.String({ enum: ['svc/group/category', 'svc/product'] }),
  id: Type.String(),
  details: Type.Object({ literals: Type.Record(Type.String(), Type.String()) }),
  items: Type.Optional(Type.Array(Type.Object({ kind: Type.String(), id: Type.String() }))),
  price: Type.Optional(Type.String()),
  soldOut: Type.Optional(Type.Literal(true)),
});

export function menuRoutes(menus: MenuService): Route[] {
  return [
    route({
      method: 'get',
      path: '/menu-api/api/menu/:menu',
      auth: 'bearer',
      body: 'none',
      schema: {
        query: Type.Object({
          channel: OneOf(CHANNELS, 'the channel whose menu and prices are wanted'),
          instance: Type.String({ pattern: UUID_PATTERN, description: 'the venue id (UUID)' }),
        }),
      },
      doc: {
        operationId: 'getMenu',
        summary: "A venue's menu on one channel, with what is sold out there",
        params: { menu: "the menu's id (the venue's `menu`)" },
        responses: {
          200: {
            description: 'the tree, and the sold-out products of the venue',
            schema: Type.Object(
              { root: MenuNodeSchema, locks: Type.Array(SoldOutEntrySchema) },
              { additionalProperties: false },
            ),
          },
        },
      },
      handle: ({ req, query, principal }) =>
        json(200, menus.menuFor(principal.tenantId, req.params.menu!, query.instance, query.channel)),
    }),
  ];
}
