import {
  type BodyMode, type HttpRequest, json, type Principal, type Reply, type Route, type RouteContext,
} from '../../http/types.js';
import { forbidden, notFound } from '../../shared/errors.js';
import { isUuid } from '../../shared/ids.js';
import {
  type Actor, kindOf, parseDocument, parseLock, parsePackets, validateRelease, validateStockQuery, validateWarehouse,
} from './schemas.js';
import type { WarehouseService } from './service.js';

const BASE = '/warehouse-api/api/warehouse';

/**
 * The acting tenant and user. Every warehouse call needs scope write (the route's auth) and an `x-tenant`
 * header equal to the token's tenant (mount.ts refuses a different one; here a missing one). `x-user` must
 * equal the token's user where sent, and must be sent on document and lock operations (README "Walk-through: staff token, PZ, stock, lock, WZ with unlockItems").
 */
function actorOf(req: HttpRequest, principal: Principal, userHeader: 'required' | 'optional'): Actor {
  if (req.headers['x-tenant'] === undefined) throw forbidden('x-tenant header is required');
  const user = req.headers['x-user'];
  if (user === undefined && userHeader === 'required') throw forbidden('x-user header is required');
  if (user !== undefined && user !== principal.userId) throw forbidden('x-user differs from the token user');
  return { tenantId: principal.tenantId, userId: principal.userId };
}

/** A warehouse id in a path must be a UUID; anything else names no warehouse. */
const warehouseIdOf = (id: string | undefined): string => {
  if (!id || !isUuid(id)) throw notFound('warehouse');
  return id;
};

/** A route under /warehouse/{warehouse}: scope write, the acting user and the warehouse id checked first. */
function inWarehouse(
  method: Route['method'], rest: string, body: BodyMode, userHeader: 'required' | 'optional',
  handle: (actor: Actor, warehouseId: string, ctx: RouteContext) => Reply,
): Route {
  return {
    method, path: `${BASE}/:warehouse${rest}`, auth: 'write', body,
    handle: (ctx) => handle(actorOf(ctx.req, ctx.principal, userHeader), warehouseIdOf(ctx.req.params.warehouse), ctx),
  };
}

export function warehouseRoutes(warehouse: WarehouseService): Route[] {
  return [
    {
      method: 'post',
      path: BASE,
      auth: 'write',
      body: 'json',
      handle({ req, principal, body }) {
        const result = warehouse.createWarehouse(actorOf(req, principal, 'optional'), validateWarehouse(body));
        return json(result.created ? 201 : 200, result.warehouse);
      },
    },
    inWarehouse('put', '', 'json', 'optional', (actor, id, { body }) =>
      json(200, warehouse.updateWarehouse(actor, id, validateWarehouse(body)))),
    inWarehouse('get', '', 'none', 'optional', (actor, id) => json(200, warehouse.getWarehouse(actor, id))),
    inWarehouse('post', '/documents/:kind', 'json', 'required', (actor, id, { req, body }) => {
      const kind = kindOf(req.params.kind ?? '');
      if (!kind) throw notFound(`document kind ${req.params.kind}`);
      const result = warehouse.postDocument(actor, id, parseDocument(kind, body));
      return json(result.created ? 201 : 200, result.document);
    }),
    inWarehouse('post', '/stock', 'json', 'optional', (actor, id, { body }) =>
      json(200, warehouse.stock(actor, id, validateStockQuery(body).items))),
    inWarehouse('post', '/locks', 'json', 'required', (actor, id, { body }) => {
      const lock = parseLock(body);
      return json(200, warehouse.lockItems(actor, id, lock.packets, lock.items));
    }),
    inWarehouse('post', '/locks/packets', 'json', 'required', (actor, id, { req, body }) =>
      json(200, warehouse.lockPackets(actor, id, parsePackets(body, req.body.toString('utf8'))))),
    inWarehouse('del', '/locks', 'optional-json', 'required', (actor, id, { body }) =>
      json(200, warehouse.releaseLocks(actor, id, body === undefined ? undefined : validateRelease(body).items))),
  ];
}
