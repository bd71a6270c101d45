import { type TSchema, Type } from '@sinclair/typebox';
import { json, type Route } from '../../../http/types.js';
import { invalidField } from '../../../shared/errors.js';
import { idParam, limitOf } from '../../../shared/validate.js';
import { ok } from '../../contracts.js';
import { createdBounds, dateParam } from '../reports/dates.js';
import { decodeCursor } from './cursor.js';
import type { HqService } from './service.js';
import { HqDeviceList } from '../devices/schemas.js';
import { StockDocumentDetail } from './schemas.js';

const Id = (what: string) => Type.String({ description: what });
export const ORDER_STATUSES = ['NEW', 'ORDERED', 'READY', 'COMPLETED', 'CANCELLED'] as const;

/** A query parameter from a closed list of values. */
function oneOf<T extends string>(query: URLSearchParams, name: string, values: readonly T[]): T | undefined {
  const value = query.get(name);
  if (value === null) return undefined;
  if (!(values as readonly string[]).includes(value))
    throw invalidField(name, `${name} must be one of ${values.join(', ')}`);
  return value as T;
}

/** The order search's text: 2 to 100 characters (a shorter one matches nearly everything). */
function textParam(query: URLSearchParams): string | undefined {
  const value = query.get('q');
  if (value === null) return undefined;
  if ([...value].length < 2 || [...value].length > 100 || value.includes('\u0000'))
    throw invalidField('q', 'q must be 2 to 100 characters');
  return value;
}

const Contact = Type.Union([Type.Record(Type.String(), Type.String()), Type.Null()], {
  description: 'the contact the order was placed with (name, phone, email), null when it has none',
});
const OrderItem = Type.Object(
  {
    id: Type.String(),
    status: Type.String(),
    created: Type.String(),
    deviceId: Type.String({ description: 'the device that sent the order' }),
    version: Type.Integer({ description: "the order's version as last received" }),
    contact: Contact,
  },
  { additionalProperties: true, description: 'the Order of the interface (src/shared/order-schemas.ts) plus these' },
);
const Page = (what: string, item: TSchema = Type.Object({}, { additionalProperties: true })) =>
  Type.Object({
    items: Type.Array(item, { description: what }),
    next: Type.Union([Type.String(), Type.Null()], {
      description: 'an opaque cursor for `after`, null on the last page',
    }),
  });
const listQuery = {
  after: Type.Optional(Type.String({ description: "the previous page's next" })),
  limit: Type.Optional(Type.String({ description: '1 to 200 (default 50)' })),
};

/** Headquarters' read API: every route needs a central token of the tenant (mount.ts checks x-tenant). */
export function hqRoutes(hq: HqService): Route[] {
  return [
    {
      method: 'get',
      path: '/hq-api/api/orders',
      auth: 'bearer',
      body: 'none',
      schema: {
        query: Type.Object({
          venueId: Type.Optional(Id('a venue')),
          status: Type.Optional(Type.String({ enum: [...ORDER_STATUSES], description: 'an order status' })),
          deviceId: Type.Optional(Id('a device')),
          source: Type.Optional(Id("the order's source")),
          from: Type.Optional(Type.String({ description: 'first venue-local date YYYY-MM-DD' })),
          to: Type.Optional(Type.String({ description: 'last venue-local date YYYY-MM-DD, inclusive' })),
          q: Type.Optional(
            Type.String({ description: 'text in the contact (name, phone, email), 2 to 100 characters' }),
          ),
          ...listQuery,
        }),
      },
      doc: {
        summary: "The tenant's orders, newest first by created, with filters",
        responses: ok('a page of Orders, each with deviceId, version and contact', Page('Orders', OrderItem)),
      },
      async handle({ req, principal }) {
        const q = req.query;
        const from = dateParam(q, 'from', false);
        const to = dateParam(q, 'to', false);
        if (from !== undefined && to !== undefined && to < from) throw invalidField('to', 'to must not be before from');
        const bounds = createdBounds(from, to);
        return json(
          200,
          await hq.orders(principal.tenantId, {
            venueId: idParam(q, 'venueId'),
            status: oneOf(q, 'status', ORDER_STATUSES),
            deviceId: idParam(q, 'deviceId'),
            source: idParam(q, 'source'),
            from,
            to,
            createdAfter: bounds.after,
            createdBefore: bounds.before,
            q: textParam(q),
            after: decodeCursor(q.get('after')),
            limit: limitOf(q, 50, 200),
          }),
        );
      },
    },
    {
      method: 'get',
      path: '/hq-api/api/orders/:id',
      auth: 'bearer',
      body: 'none',
      doc: {
        summary: 'One order as its box last sent it',
        params: { id: 'the order id' },
        responses: ok('the Order with deviceId and version'),
      },
      handle: async ({ req, principal }) => json(200, await hq.order(principal.tenantId, req.params.id!)),
    },
    {
      method: 'get',
      path: '/hq-api/api/orders/:id/versions',
      auth: 'bearer',
      body: 'none',
      doc: {
        summary: 'Every version of an order, with the command that made it',
        params: { id: 'the order id' },
        responses: ok('the versions'),
      },
      handle: async ({ req, principal }) => json(200, await hq.orderVersions(principal.tenantId, req.params.id!)),
    },
    {
      method: 'get',
      path: '/hq-api/api/stock',
      auth: 'bearer',
      body: 'none',
      schema: { query: Type.Object({ warehouseId: Id('the warehouse') }) },
      doc: { summary: "A warehouse's stock balances", responses: ok('the balances') },
      handle: async ({ req, principal }) =>
        json(200, await hq.stock(principal.tenantId, idParam(req.query, 'warehouseId', true)!)),
    },
    {
      method: 'get',
      path: '/hq-api/api/stock-documents',
      auth: 'bearer',
      body: 'none',
      schema: { query: Type.Object({ warehouseId: Id('the warehouse'), ...listQuery }) },
      doc: {
        summary: "A warehouse's stock documents, newest first",
        responses: ok('a page of documents', Page('documents')),
      },
      async handle({ req, principal }) {
        const q = req.query;
        return json(
          200,
          await hq.documents(
            principal.tenantId,
            idParam(q, 'warehouseId', true)!,
            decodeCursor(q.get('after')),
            limitOf(q, 50, 200),
          ),
        );
      },
    },
    {
      method: 'get',
      path: '/hq-api/api/stock-documents/:id',
      auth: 'bearer',
      body: 'none',
      doc: {
        summary: 'One stock document as the list gives it, with the ledger rows it booked',
        params: { id: 'the document id' },
        responses: ok('the document and its ledger', StockDocumentDetail),
      },
      handle: async ({ req, principal }) => json(200, await hq.document(principal.tenantId, req.params.id!)),
    },
    {
      method: 'get',
      path: '/hq-api/api/devices',
      auth: 'bearer',
      body: 'none',
      doc: {
        summary: "The tenant's boxes: venue, program, update, head, lag, contact, clock offset, catalogue rev",
        responses: ok('the devices', HqDeviceList),
      },
      handle: async ({ principal }) => json(200, await hq.devices(principal.tenantId)),
    },
  ];
}
