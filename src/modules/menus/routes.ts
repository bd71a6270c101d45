import { Type } from '@sinclair/typebox';
import { json, type Route } from '../../http/types.js';
import { SoldOutEntrySchema } from './sold-out-routes.js';
import { invalidField } from '../../shared/errors.js';
import { isUuid } from '../../shared/ids.js';
import { type Channel, CHANNELS } from '../venues/schemas.js';
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
    {
      method: 'get',
      path: '/menu-api/api/menu/:menu',
      auth: 'bearer',
      body: 'none',
      schema: {
        query: Type.Object({
          channel: Type.String({ enum: ['DELIVERY', 'TAKE_AWAY', 'DINE_IN'] }),
          instance: Type.String({ description: 'the venue id' }),
        }),
      },
      doc: {
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
      handle({ req, principal }) {
        const channel = req.query.get('channel') ?? '';
        if (!(CHANNELS as readonly string[]).includes(channel)) {
          throw invalidField('channel', `channel must be one of ${CHANNELS.join(', ')}`);
        }
        const instance = req.query.get('instance') ?? '';
        if (!isUuid(instance)) throw invalidField('instance', 'instance must be a venue id (UUID)');
        return json(200, menus.menuFor(principal.tenantId, req.params.menu!, instance, channel as Channel));
      },
    },
  ];
}
