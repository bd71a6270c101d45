import { json, type Route } from '../../../http/types.js';
import { invalidField } from '../../../shared/errors.js';
import { limitOf } from '../../../shared/validate.js';
import { decodeCursor } from './cursor.js';
import type { HqService } from './service.js';

/** An optional id-like query parameter: absent, or 1..64 characters. */
function idParam(query: URLSearchParams, name: string, required = false): string | undefined {
  const value = query.get(name);
  if (value === null && !required) return undefined;
  if (value === null || value.length === 0 || value.length > 64) throw invalidField(name, `${name} must be an id`);
  return value;
}

/** Headquarters' read API: every route needs a central token of the tenant (mount.ts checks x-tenant). */
export function hqRoutes(hq: HqService): Route[] {
  return [
    {
      method: 'get', path: '/hq-api/api/orders', auth: 'bearer', body: 'none',
      async handle({ req, principal }) {
        const q = req.query;
        return json(200, await hq.orders(principal.tenantId, {
          venueId: idParam(q, 'venueId'), status: idParam(q, 'status'), deviceId: idParam(q, 'deviceId'),
          after: decodeCursor(q.get('after')), limit: limitOf(q, 50, 200),
        }));
      },
    },
    {
      method: 'get', path: '/hq-api/api/orders/:id', auth: 'bearer', body: 'none',
      handle: async ({ req, principal }) => json(200, await hq.order(principal.tenantId, req.params.id!)),
    },
    {
      method: 'get', path: '/hq-api/api/orders/:id/versions', auth: 'bearer', body: 'none',
      handle: async ({ req, principal }) => json(200, await hq.orderVersions(principal.tenantId, req.params.id!)),
    },
    {
      method: 'get', path: '/hq-api/api/stock', auth: 'bearer', body: 'none',
      handle: async ({ req, principal }) => json(200, await hq.stock(principal.tenantId, idParam(req.query, 'warehouseId', true)!)),
    },
    {
      method: 'get', path: '/hq-api/api/stock-documents', auth: 'bearer', body: 'none',
      async handle({ req, principal }) {
        const q = req.query;
        return json(200, await hq.documents(principal.tenantId, idParam(q, 'warehouseId', true)!, decodeCursor(q.get('after')), limitOf(q, 50, 200)));
      },
    },
    {
      method: 'get', path: '/hq-api/api/devices', auth: 'bearer', body: 'none',
      handle: async ({ principal }) => json(200, await hq.devices(principal.tenantId)),
    },
  ];
}
