import { type TSchema, Type } from '@sinclair/typebox';
import { type HttpRequest, json, type Principal, type Route, type RouteDoc, route } from '../../../http/types.js';
import { Category, Scope, Username, Venue } from '../../../shared/catalogue-schemas.js';
import { MAX_CATALOGUE_WAIT_S } from '../../../shared/catalogue-protocol.js';
import { invalidField } from '../../../shared/errors.js';
import { PATHS } from '../../../shared/sync-protocol.js';
import { MAX_COUNTER, OneOf } from '../../../http/contracts/query.js';
import { Price, ProductId, Uuid } from '../../../shared/types.js';
import { compile } from '../../../shared/validate.js';
import { ok, SIGNED_HEADERS } from '../../contracts.js';
import { ChangeAnswer, IF_MATCH_HEADER, ifMatchOf, PriceEverywhereAnswer } from './schemas.js';
import type { Pool } from '../../db/pool.js';
import type { ReleaseTarget } from '../../../shared/release-schemas.js';
import type { DeviceRow } from '../devices/repo.js';
import type { DeviceService } from '../devices/service.js';
import { createInboxRepo } from '../inbox/repo.js';
import type { CatalogueFeed } from './feed.js';
import type { Caller, HqCatalogue } from './hq-service.js';

const MenuBody = Type.Object({ root: Category }, { additionalProperties: false });
const PriceBody = Type.Object({ price: Price }, { additionalProperties: false });
const UserBody = Type.Object(
  { password: Type.Optional(Type.String({ minLength: 8, maxLength: 200 })), scope: Scope },
  { additionalProperties: false },
);
const ClientBody = Type.Object(
  { clientSecret: Type.String({ minLength: 8, maxLength: 200 }) },
  { additionalProperties: false },
);
const WarehouseBody = Type.Object(
  { name: Type.String({ minLength: 1, maxLength: 200 }) },
  { additionalProperties: false },
);
const SoldOutBody = Type.Object(
  { reason: Type.Optional(Type.String({ maxLength: 500 })) },
  { additionalProperties: false },
);
const checkMenuId = compile(Type.String({ minLength: 1, maxLength: 100 }));

/** A path parameter checked with the schema the body would use; a 400 naming the parameter. */
function param(
  value: string | undefined,
  name: string,
  schema: { pattern?: string; minLength?: number; maxLength?: number },
): string {
  const v = value ?? '';
  const ok =
    v.length >= (schema.minLength ?? 1) &&
    v.length <= (schema.maxLength ?? 100) &&
    (!schema.pattern || new RegExp(schema.pattern).test(v));
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

/**
 * The box's long poll for its catalogue: a request signed by the device, answered with its own tenant only, and
 * with the release the box should run (`release`, from `targetFor`; docs/sync.md "Releases and rollouts").
 */
export function catalogueFeedRoutes(
  devices: DeviceService,
  feed: CatalogueFeed,
  pool: Pool,
  targetFor?: (device: DeviceRow) => Promise<ReleaseTarget | null>,
): Route[] {
  return [
    route({
      method: 'get',
      path: PATHS.catalogue,
      auth: 'none',
      body: 'none',
      schema: {
        query: Type.Object({
          after: Type.Optional(
            Type.Integer({ minimum: 0, maximum: MAX_COUNTER, default: 0, description: 'the rev the box committed' }),
          ),
          wait: Type.Optional(
            Type.Integer({
              minimum: 0,
              maximum: MAX_CATALOGUE_WAIT_S,
              default: 0,
              description: 'seconds to wait for a change',
            }),
          ),
          snapshot: Type.Optional(OneOf(['0', '1'] as const, '1: the whole catalogue; 0 (the default): the changes')),
          release: Type.Optional(
            Type.String({
              pattern: '^[A-Za-z0-9._:-]{1,64}$',
              description:
                'the rollout of the release the box was last told to run (`none`: none): when it is no longer the ' +
                "box's, the poll answers at once",
            }),
          ),
        }),
      },
      doc: {
        operationId: 'getCatalogueChanges',
        summary: "The box's catalogue after a rev (signed; a long poll)",
        tag: 'sync-api',
        headers: SIGNED_HEADERS,
        responses: ok('the changes after `after` (src/shared/catalogue-protocol.ts), or none when `wait` passed'),
      },
      async handle({ req, query }) {
        const after = query.after ?? 0;
        const wait = query.wait ?? 0;
        const device = await devices.authenticate(req, '');
        // The box asks with the rev it committed: everything up to it (headquarters' entries too) is acknowledged.
        // Most polls ask with the rev acknowledged already (every idle one): no round trip for them.
        if (device.catalogueRev !== after)
          await createInboxRepo(pool).acknowledge(device.tenantId, device.deviceId, after);
        // A rollout change only wakes the polls waiting at the time: a box that names the rollout it knows is
        // answered at once when that is no longer its rollout, however late after the change it asks.
        const known = query.release;
        const outOfDate =
          targetFor && known !== undefined
            ? async () => ((await targetFor(device))?.rollout ?? 'none') !== known
            : undefined;
        const answer = await feed.poll(
          device.tenantId,
          after,
          wait * 1000,
          query.snapshot === '1',
          device.venueId,
          outOfDate,
        );
        // Computed when the poll answers, so a rollout change that woke it is in the answer.
        return json(200, targetFor ? { ...answer, release: await targetFor(device) } : answer);
      },
    }),
  ];
}

/** Headquarters' catalogue API (docs/sync.md "Down: the catalogue"): reads with `read`, changes with `read write`. */
export function hqCatalogueRoutes(hq: HqCatalogue): Route[] {
  /** A change with a body: `body` validates (valid()) and documents it. */
  const change = <B extends TSchema>(
    method: 'put' | 'patch',
    path: string,
    names: Pick<RouteDoc, 'operationId' | 'summary'>,
    body: B,
    handle: Route<B>['handle'],
  ): Route =>
    route<B>({
      method,
      path,
      auth: 'write',
      body: 'json',
      schema: { body },
      doc: { ...names, headers: [IF_MATCH_HEADER], responses: ok('the new rev', ChangeAnswer) },
      handle,
    });
  const del = (path: string, names: Pick<RouteDoc, 'operationId' | 'summary'>, handle: Route['handle']): Route => ({
    method: 'del',
    path,
    auth: 'write',
    body: 'none',
    doc: { ...names, headers: [IF_MATCH_HEADER], responses: ok('the new rev of the retirement', ChangeAnswer) },
    handle,
  });
  const base = '/hq-api/api';
  return [
    {
      method: 'get',
      path: `${base}/catalogue`,
      auth: 'bearer',
      body: 'none',
      doc: {
        operationId: 'getCatalogue',
        summary: "The tenant's whole catalogue: venues, menus, staff users, clients, warehouses, sold-out flags",
        responses: ok('the catalogue'),
      },
      handle: async ({ principal }) => json(200, await hq.catalogue(principal.tenantId)),
    },
    change(
      'put',
      `${base}/venues/:id`,
      { operationId: 'putVenue', summary: 'Create or replace a venue' },
      Venue,
      async ({ req, principal, valid }) =>
        json(200, await hq.putVenue(callerOf(principal, req), uuid(req.params.id, 'id'), valid())),
    ),
    del(`${base}/venues/:id`, { operationId: 'retireVenue', summary: 'Retire a venue' }, async ({ req, principal }) =>
      json(200, await hq.retireVenue(callerOf(principal, req), req.params.id!)),
    ),
    change(
      'put',
      `${base}/menus/:id`,
      { operationId: 'putMenu', summary: 'Create or replace a menu' },
      MenuBody,
      async ({ req, principal, valid }) => {
        const id = menuId(req.params.id);
        return json(200, await hq.putMenu(callerOf(principal, req), id, valid().root));
      },
    ),
    del(`${base}/menus/:id`, { operationId: 'retireMenu', summary: 'Retire a menu' }, async ({ req, principal }) =>
      json(200, await hq.retireMenu(callerOf(principal, req), req.params.id!)),
    ),
    change(
      'patch',
      `${base}/menus/:id/products/:productId`,
      { operationId: 'setMenuPrice', summary: "Set a product's price in a menu" },
      PriceBody,
      async ({ req, principal, valid }) => {
        const id = menuId(req.params.id);
        const productId = param(req.params.productId, 'productId', ProductId);
        return json(200, await hq.setPrice(callerOf(principal, req), id, productId, valid().price));
      },
    ),
    route({
      method: 'patch',
      path: `${base}/products/:productId/price`,
      auth: 'write',
      body: 'json',
      schema: { body: PriceBody },
      doc: {
        operationId: 'setPriceEverywhere',
        summary: "Set a product's price in every live menu that lists it, at one rev",
        params: { productId: 'the product' },
        responses: ok('the new rev and the menus that list the product', PriceEverywhereAnswer),
      },
      handle: async ({ req, principal, valid }) => {
        const productId = param(req.params.productId, 'productId', ProductId);
        return json(200, await hq.setPriceEverywhere(callerOf(principal, req), productId, valid().price));
      },
    }),
    change(
      'put',
      `${base}/staff-users/:username`,
      { operationId: 'putStaffUser', summary: 'Create or change a staff user of the boxes' },
      UserBody,
      async ({ req, principal, valid }) =>
        json(
          200,
          await hq.putStaffUser(callerOf(principal, req), param(req.params.username, 'username', Username), valid()),
        ),
    ),
    del(
      `${base}/staff-users/:username`,
      { operationId: 'retireStaffUser', summary: 'Retire a staff user' },
      async ({ req, principal }) => json(200, await hq.retireStaffUser(callerOf(principal, req), req.params.username!)),
    ),
    change(
      'put',
      `${base}/clients/:clientId`,
      { operationId: 'putClient', summary: 'Create an OAuth client of the boxes, or change its secret' },
      ClientBody,
      async ({ req, principal, valid }) =>
        json(
          200,
          await hq.putClient(
            callerOf(principal, req),
            param(req.params.clientId, 'clientId', {}),
            valid().clientSecret,
          ),
        ),
    ),
    del(
      `${base}/clients/:clientId`,
      { operationId: 'retireClient', summary: 'Retire a client' },
      async ({ req, principal }) => json(200, await hq.retireClient(callerOf(principal, req), req.params.clientId!)),
    ),
    change(
      'put',
      `${base}/warehouses/:id`,
      { operationId: 'putWarehouse', summary: 'Create or rename a warehouse' },
      WarehouseBody,
      async ({ req, principal, valid }) =>
        json(200, await hq.putWarehouse(callerOf(principal, req), uuid(req.params.id, 'id'), valid().name)),
    ),
    del(
      `${base}/warehouses/:id`,
      { operationId: 'retireWarehouse', summary: 'Retire a warehouse' },
      async ({ req, principal }) => json(200, await hq.retireWarehouse(callerOf(principal, req), req.params.id!)),
    ),
    change(
      'put',
      `${base}/sold-out/:venueId/:productId`,
      { operationId: 'setSoldOut', summary: "Mark a product sold out at a venue (headquarters' flag)" },
      SoldOutBody,
      async ({ req, principal, valid }) => {
        const venueId = uuid(req.params.venueId, 'venueId');
        const productId = param(req.params.productId, 'productId', ProductId);
        return json(200, await hq.setSoldOut(callerOf(principal, req), venueId, productId, valid().reason ?? ''));
      },
    ),
    del(
      `${base}/sold-out/:venueId/:productId`,
      { operationId: 'clearSoldOut', summary: "Clear headquarters' sold-out flag" },
      async ({ req, principal }) =>
        json(200, await hq.clearSoldOut(callerOf(principal, req), req.params.venueId!, req.params.productId!)),
    ),
  ];
}

/** The caller of a change: the token's tenant and user, and the request's If-Match. */
const callerOf = (principal: Principal, req: HttpRequest): Caller => ({
  tenantId: principal.tenantId,
  userId: principal.userId,
  ifMatch: ifMatchOf(req.headers['if-match']),
});
