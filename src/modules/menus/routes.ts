import { json, type Route } from '../../http/types.js';
import { invalidField } from '../../shared/errors.js';
import { isUuid } from '../../shared/ids.js';
import { type Channel, CHANNELS } from '../venues/schemas.js';
import type { MenuService } from './service.js';

export function menuRoutes(menus: MenuService): Route[] {
  return [
    {
      method: 'get',
      path: '/menu-api/api/menu/:menu',
      auth: 'bearer',
      body: 'none',
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
