import { Type } from '@sinclair/typebox';
import { json, type Route } from '../../../http/types.js';
import { Category, Scope, Username, Venue } from '../../../shared/catalogue-schemas.js';
import { MAX_CATALOGUE_WAIT_S } from '../../../shared/catalogue-protocol.js';
import { invalidField } from '../../../shared/errors.js';
import { PATHS } from '../../../shared/sync-protocol.js';
import { Price, ProductId, Uuid } from '../../../shared/types.js';
import { compile } from '../../../shared/validate.js';
import type { Pool } from '../../db/pool.js';
import type { DeviceService } from '../devices/service.js';
import { createInboxRepo } from '../inbox/repo.js';
import type { CatalogueFeed } from './feed.js';
import type { HqCatalogue } from './hq-service.js';

const checkVenue = compile(Venue);
const checkMenu = compile(Type.Object({ root: Category }, { additionalProperties: false }));
const checkPrice = compile(Type.Object({ price: Price }, { additionalProperties: false }));
const checkUser = compile(Type.Object({ password: Type.Optional(Type.String({ minLength: 8, maxLength: 200 })), scope: Scope },
  { additionalProperties: false }));
const checkClient = compile(Type.Object({ clientSecret: Type.String({ minLength: 8, maxLength: 200 }) }, { additionalProperties: false }));
const checkWarehouse = compile(Type.Object({ name: Type.String({ minLength: 1, maxLength: 200 }) }, { additionalProperties: false }));
const checkSoldOut = compile(Type.Object({ reason: Type.Optional(Type.String({ maxLength: 500 })) }, { additionalProperties: false }));
const checkMenuId = compile(Type.String({ minLength: 1, maxLength: 100 }));

/** A path parameter checked with the schema the body would use; a 400 naming the parameter. */
function param(value: string | undefined, name: string, schema: { pattern?: string; minLength?: number; maxLength?: number }): string {
  const v = value ?? '';
  const ok = v.length >= (schema.minLength ?? 1) && v.length <= (schema.maxLength ?? 100) && (!schema.pattern || new RegExp(schema.pattern).test(v));
  if (!ok) throw invalidField(name, `${name} is not a valid ${name}`);
  return v;
}
const uuid = (v: string | undefined, name: string) => param(v, name, { pattern: Uuid.pattern });
const menuId = (v: string | undefined) => {
  try {
    return checkMenuId(v);
  } catch {
    throw invalidField('menuId', 'menuId must be 1 to 100 characters');
  }
};

/** The box's long poll for its catalogue: a request signed by the device, answered with its own tenant only. */
export function catalogueFeedRoutes(devices: DeviceService, feed: CatalogueFeed, pool: Pool): Route[] {
  return [{
    method: 'get', path: PATHS.catalogue, auth: 'none', body: 'none',
    async handle({ req }) {
      const after = req.query.get('after') ?? '0';
      if (!/^\d{1,15}$/.test(after)) throw invalidField('after', 'after must be a rev (a non-negative integer)');
      const wait = req.query.get('wait') ?? '0';
      if (!/^\d{1,3}$/.test(wait) || Number(wait) > MAX_CATALOGUE_WAIT_S) {
        throw invalidField('wait', `wait must be 0 to ${MAX_CATALOGUE_WAIT_S} seconds`);
      }
      const device = await devices.authenticate(req, '');
      // The box asks with the rev it committed: everything up to it (headquarters' entries too) is acknowledged.
      await createInboxRepo(pool).acknowledge(device.tenantId, device.deviceId, Number(after));
      return json(200, await feed.poll(device.tenantId, Number(after), Number(wait) * 1000, req.query.get('snapshot') === '1', device.venueId));
    },
  }];
}

/** Headquarters' catalogue API (docs/sync.md "Down: the catalogue"): reads with `read`, changes with `read write`. */
export function hqCatalogueRoutes(hq: HqCatalogue): Route[] {
  const put = (path: string, handle: Route['handle']): Route => ({ method: 'put', path, auth: 'write', body: 'json', handle });
  const del = (path: string, handle: Route['handle']): Route => ({ method: 'del', path, auth: 'write', body: 'none', handle });
  const base = '/hq-api/api';
  return [
    { method: 'get', path: `${base}/catalogue`, auth: 'bearer', body: 'none', handle: async ({ principal }) => json(200, await hq.catalogue(principal.tenantId)) },
    put(`${base}/venues/:id`, async ({ req, principal, body }) =>
      json(200, await hq.putVenue(principal.tenantId, uuid(req.params.id, 'id'), checkVenue(body)))),
    del(`${base}/venues/:id`, async ({ req, principal }) => json(200, await hq.retireVenue(principal.tenantId, req.params.id!))),
    put(`${base}/menus/:id`, async ({ req, principal, body }) =>
      json(200, await hq.putMenu(principal.tenantId, menuId(req.params.id), checkMenu(body).root))),
    del(`${base}/menus/:id`, async ({ req, principal }) => json(200, await hq.retireMenu(principal.tenantId, req.params.id!))),
    {
      method: 'patch', path: `${base}/menus/:id/products/:productId`, auth: 'write', body: 'json',
      handle: async ({ req, principal, body }) => json(200, await hq.setPrice(principal.tenantId, menuId(req.params.id),
        param(req.params.productId, 'productId', ProductId), checkPrice(body).price)),
    },
    put(`${base}/staff-users/:username`, async ({ req, principal, body }) =>
      json(200, await hq.putStaffUser(principal.tenantId, param(req.params.username, 'username', Username), checkUser(body)))),
    del(`${base}/staff-users/:username`, async ({ req, principal }) => json(200, await hq.retireStaffUser(principal.tenantId, req.params.username!))),
    put(`${base}/clients/:clientId`, async ({ req, principal, body }) =>
      json(200, await hq.putClient(principal.tenantId, param(req.params.clientId, 'clientId', {}), checkClient(body).clientSecret))),
    del(`${base}/clients/:clientId`, async ({ req, principal }) => json(200, await hq.retireClient(principal.tenantId, req.params.clientId!))),
    put(`${base}/warehouses/:id`, async ({ req, principal, body }) =>
      json(200, await hq.putWarehouse(principal.tenantId, uuid(req.params.id, 'id'), checkWarehouse(body).name))),
    del(`${base}/warehouses/:id`, async ({ req, principal }) => json(200, await hq.retireWarehouse(principal.tenantId, req.params.id!))),
    put(`${base}/sold-out/:venueId/:productId`, async ({ req, principal, body }) =>
      json(200, await hq.setSoldOut(principal.tenantId, uuid(req.params.venueId, 'venueId'), param(req.params.productId, 'productId', ProductId),
        checkSoldOut(body).reason ?? ''))),
    del(`${base}/sold-out/:venueId/:productId`, async ({ req, principal }) =>
      json(200, await hq.clearSoldOut(principal.tenantId, req.params.venueId!, req.params.productId!))),
  ];
}
