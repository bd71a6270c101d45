import { type TSchema, Type } from '@sinclair/typebox';
import {
  type BodyMode,
  type HttpRequest,
  json,
  type Principal,
  type Reply,
  type Route,
  route,
  type RouteContext,
  type RouteDoc,
} from '../../http/types.js';
import { forbidden, invalidField, notFound } from '../../shared/errors.js';
import { isUuid } from '../../shared/ids.js';
import {
  DocumentBody,
  documentInput,
  LockBody,
  PacketsBody,
  ReleaseBody,
  StockQuery,
  WarehouseBody,
  type Actor,
  kindOf,
  lockOf,
  packetsOf,
} from './schemas.js';
import type { WarehouseService } from './service.js';

const BASE = '/warehouse-api/api/warehouse';

/**
 * The acting tenant and user. Every warehouse call needs scope write (the route's auth) and an `x-tenant`
 * header equal to the token's tenant (mount.ts refuses a different one with 403; here a missing one, 400). `x-user` must
 * equal the token's user where sent, and must be sent on document and lock operations (docs/warehouse.md "Walk-through: staff token, PZ, stock, lock, WZ with unlockItems").
 */
function actorOf(req: HttpRequest, principal: Principal, userHeader: 'required' | 'optional'): Actor {
  // A missing header is a malformed request (400), not a refusal: 403 is for a tenant that is not the token's.
  if (req.headers['x-tenant'] === undefined) throw invalidField('x-tenant', 'x-tenant header is required');
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

const X_TENANT = { name: 'x-tenant', required: true, description: "the token's tenant" };
const xUser = (required: boolean) => ({ name: 'x-user', required, description: "the token's user (UUID)" });

const Instant = Type.String({ format: 'date-time' });
const WarehouseSchema = Type.Object({ id: Type.String(), name: Type.String() }, { additionalProperties: false });
const DocumentSchema = Type.Object(
  {
    id: Type.String(),
    kind: Type.String({ enum: ['PZ', 'WZ', 'RW', 'MM', 'Inventory'] }),
    warehouse: Type.String(),
    number: Type.String(),
    targetWarehouse: Type.Optional(Type.String()),
    user: Type.String(),
    created: Instant,
    items: Type.Array(
      Type.Object(
        {
          id: Type.String(),
          unit: Type.String(),
          qty: Type.Number(),
          unitPrice: Type.Optional(Type.Number()),
          total: Type.Optional(Type.Number()),
          cat: Type.Optional(Type.Array(Type.String())),
          extra: Type.Optional(Type.Record(Type.String(), Type.String())),
        },
        { additionalProperties: false },
      ),
    ),
    unlockItems: Type.Boolean(),
    extra: Type.Record(Type.String(), Type.String()),
  },
  { additionalProperties: false },
);
const StockSchema = Type.Object(
  {
    warehouse: Type.String(),
    items: Type.Array(
      Type.Object(
        {
          id: Type.String(),
          unit: Type.Union([Type.String(), Type.Null()]),
          qty: Type.Number(),
          locked: Type.Number(),
          available: Type.Number(),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);
const ItemLockSchema = Type.Object(
  {
    warehouse: Type.String(),
    expires: Instant,
    items: Type.Array(
      Type.Object(
        {
          id: Type.String(),
          unit: Type.String(),
          requested: Type.Number(),
          locked: Type.Number(),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);
const PacketLockSchema = Type.Object(
  {
    warehouse: Type.String(),
    expires: Instant,
    packets: Type.Record(
      Type.String(),
      Type.Object({ requested: Type.Number(), locked: Type.Number() }, { additionalProperties: false }),
    ),
  },
  { additionalProperties: false },
);
const ReleaseSchema = Type.Object(
  {
    warehouse: Type.String(),
    items: Type.Array(
      Type.Object(
        {
          id: Type.String(),
          unit: Type.Union([Type.String(), Type.Null()]),
          released: Type.Number(),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);

/**
 * A route under /warehouse/{warehouse}: scope write, the acting user and the warehouse id checked first, then
 * the handler (which checks the body by `body`, the route's one schema, through valid()).
 */
function inWarehouse<B extends TSchema>(
  method: Route['method'],
  rest: string,
  mode: BodyMode,
  userHeader: 'required' | 'optional',
  body: B | undefined,
  doc: RouteDoc,
  handle: (actor: Actor, warehouseId: string, ctx: RouteContext<B>) => Reply,
): Route {
  return route<B>({
    method,
    path: `${BASE}/:warehouse${rest}`,
    auth: 'write',
    body: mode,
    ...(body ? { schema: { body } } : {}),
    doc: {
      ...doc,
      params: { warehouse: 'the warehouse id', ...doc.params },
      headers: [X_TENANT, xUser(userHeader === 'required')],
    },
    handle: (ctx) => handle(actorOf(ctx.req, ctx.principal, userHeader), warehouseIdOf(ctx.req.params.warehouse), ctx),
  });
}

export function warehouseRoutes(warehouse: WarehouseService): Route[] {
  return [
    route({
      method: 'post',
      path: BASE,
      auth: 'write',
      body: 'json',
      schema: { body: WarehouseBody },
      doc: {
        operationId: 'createWarehouse',
        summary: 'Create a warehouse (the same id and name again: 200)',
        headers: [X_TENANT, xUser(false)],
        responses: {
          201: { description: 'created', schema: WarehouseSchema },
          200: { description: 'it existed', schema: WarehouseSchema },
        },
      },
      handle({ req, principal, valid }) {
        const actor = actorOf(req, principal, 'optional');
        const result = warehouse.createWarehouse(actor, valid());
        return json(result.created ? 201 : 200, result.warehouse);
      },
    }),
    inWarehouse(
      'put',
      '',
      'json',
      'optional',
      WarehouseBody,
      {
        operationId: 'renameWarehouse',
        summary: 'Rename a warehouse',
        responses: { 200: { description: 'the warehouse', schema: WarehouseSchema } },
      },
      (actor, id, { valid }) => json(200, warehouse.updateWarehouse(actor, id, valid())),
    ),
    inWarehouse(
      'get',
      '',
      'none',
      'optional',
      undefined,
      {
        operationId: 'getWarehouse',
        summary: 'A warehouse',
        responses: { 200: { description: 'the warehouse', schema: WarehouseSchema } },
      },
      (actor, id) => json(200, warehouse.getWarehouse(actor, id)),
    ),
    inWarehouse(
      'post',
      '/documents/:kind',
      'json',
      'required',
      DocumentBody,
      {
        operationId: 'postStockDocument',
        summary: 'A stock document: PZ, WZ, RW, MM or Inventory (all items or none)',
        description:
          "One body for every kind: a line's qty is more than 0, and 0 only on an Inventory (a counted quantity); an MM names its targetWarehouse.",
        params: { kind: 'pz, wz, rw, mm or inventory' },
        responses: {
          201: { description: 'the stored document', schema: DocumentSchema },
          200: { description: 'the same number and content again: the stored document', schema: DocumentSchema },
        },
      },
      (actor, id, { req, valid }) => {
        const kind = kindOf(req.params.kind ?? '');
        if (!kind) throw notFound(`document kind ${req.params.kind}`);
        const result = warehouse.postDocument(actor, id, documentInput(kind, valid()));
        return json(result.created ? 201 : 200, result.document);
      },
    ),
    inWarehouse(
      'post',
      '/stock',
      'json',
      'optional',
      StockQuery,
      {
        operationId: 'getStock',
        summary: 'Current stock of the named items',
        responses: { 200: { description: 'each item: qty, locked, available', schema: StockSchema } },
      },
      (actor, id, { valid }) => json(200, warehouse.stock(actor, id, valid().items)),
    ),
    inWarehouse(
      'post',
      '/locks',
      'json',
      'required',
      LockBody,
      {
        operationId: 'lockItems',
        summary: 'Lock as much as possible of each item, for qty portions',
        responses: { 200: { description: 'what each line got', schema: ItemLockSchema } },
      },
      (actor, id, { valid }) => {
        const lock = lockOf(valid());
        return json(200, warehouse.lockItems(actor, id, lock.packets, lock.items));
      },
    ),
    inWarehouse(
      'post',
      '/locks/packets',
      'json',
      'required',
      PacketsBody,
      {
        operationId: 'lockPackets',
        summary: 'Lock whole packets (sets of items)',
        responses: { 200: { description: 'what each packet got', schema: PacketLockSchema } },
      },
      (actor, id, { req, valid }) =>
        json(200, warehouse.lockPackets(actor, id, packetsOf(valid(), req.body.toString('utf8')))),
    ),
    inWarehouse(
      'del',
      '/locks',
      'optional-json',
      'required',
      ReleaseBody,
      {
        operationId: 'releaseLocks',
        summary: "Release the caller's locks (all, or the named items)",
        responses: { 200: { description: 'what was released', schema: ReleaseSchema } },
      },
      (actor, id, { body, valid }) =>
        json(200, warehouse.releaseLocks(actor, id, body === undefined ? undefined : valid().items)),
    ),
  ];
}
