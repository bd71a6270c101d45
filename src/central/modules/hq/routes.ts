import { type TSchema, Type } from '@sinclair/typebox';
import { LimitParam, LocalDateParam, OneOf } from '../../../http/contracts/query.js';
import { json, type Route, route } from '../../../http/types.js';
import { invalidField } from '../../../shared/errors.js';
import { ok } from '../../contracts.js';
import { createdBounds, dateParam } from '../reports/dates.js';
import { decodeCursor } from './cursor.js';
import type { HqService } from './service.js';
import { HqDeviceList } from '../devices/schemas.js';
import { StockDocumentDetail } from './schemas.js';

/** An id-like parameter: 1 to 64 characters. */
const Id = (what: string) => Type.String({ minLength: 1, maxLength: 64, description: what });
export const ORDER_STATUSES = ['NEW', 'ORDERED', 'READY', 'COMPLETED', 'CANCELLED'] as const;

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
  after: Type.Optional(Type.String({ minLength: 1, description: "the previous page's next" })),
  limit: LimitParam(50, 200),
};

/**
 * The order search's filters (docs/sync.md "HQ reports and order search"): the schema is their check; a date that
 * is no day of the calendar (02-30), or `to` before `from`, is still refused by the handler.
 */
const OrderSearchQuery = Type.Object({
  venueId: Type.Optional(Id('a venue')),
  status: Type.Optional(OneOf(ORDER_STATUSES, 'an order status')),
  deviceId: Type.Optional(Id('a device')),
  source: Type.Optional(Id("the order's source")),
  from: Type.Optional(LocalDateParam('first venue-local date YYYY-MM-DD')),
  to: Type.Optional(LocalDateParam('last venue-local date YYYY-MM-DD, inclusive')),
  // Counted in characters (code points) as JSON Schema counts them: a RegExp with the u flag, not maxLength.
  q: Type.Optional(
    Type.RegExp(/^[\s\S]{2,100}$/u, {
      description: 'text in the contact (name, phone, email), 2 to 100 characters',
    }),
  ),
  ...listQuery,
});

/** Headquarters' read API: every route needs a central token of the tenant (mount.ts checks x-tenant). */
export function hqRoutes(hq: HqService): Route[] {
  return [
    route({
      method: 'get',
      path: '/hq-api/api/orders',
      auth: 'bearer',
      body: 'none',
      schema: { query: OrderSearchQuery },
      doc: {
        operationId: 'searchOrders',
        summary: "The tenant's orders, newest first by created, with filters",
        responses: ok('a page of Orders, each with deviceId, version and contact', Page('Orders', OrderItem)),
      },
      async handle({ req, query, principal }) {
        // The calendar's check (02-30), which a pattern cannot make.
        const from = dateParam(req.query, 'from', false);
        const to = dateParam(req.query, 'to', false);
        if (from !== undefined && to !== undefined && to < from) throw invalidField('to', 'to must not be before from');
        const bounds = createdBounds(from, to);
        return json(
          200,
          await hq.orders(principal.tenantId, {
            venueId: query.venueId,
            status: query.status,
            deviceId: query.deviceId,
            source: query.source,
            from,
            to,
            createdAfter: bounds.after,
            createdBefore: bounds.before,
            q: query.q,
            after: decodeCursor(query.after ?? null),
            limit: query.limit ?? 50,
          }),
        );
      },
    }),
    {
      method: 'get',
      path: '/hq-api/api/orders/:id',
      auth: 'bearer',
      body: 'none',
      doc: {
        operationId: 'getHqOrder',
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
        operationId: 'listOrderVersions',
        summary: 'Every version of an order, with the command that made it',
        params: { id: 'the order id' },
        responses: ok('the versions'),
      },
      handle: async ({ req, principal }) => json(200, await hq.orderVersions(principal.tenantId, req.params.id!)),
    },
    route({
      method: 'get',
      path: '/hq-api/api/stock',
      auth: 'bearer',
      body: 'none',
      schema: { query: Type.Object({ warehouseId: Id('the warehouse') }) },
      doc: { operationId: 'getStock', summary: "A warehouse's stock balances", responses: ok('the balances') },
      handle: async ({ query, principal }) => json(200, await hq.stock(principal.tenantId, query.warehouseId)),
    }),
    route({
      method: 'get',
      path: '/hq-api/api/stock-documents',
      auth: 'bearer',
      body: 'none',
      schema: { query: Type.Object({ warehouseId: Id('the warehouse'), ...listQuery }) },
      doc: {
        operationId: 'listStockDocuments',
        summary: "A warehouse's stock documents, newest first",
        responses: ok('a page of documents', Page('documents')),
      },
      async handle({ query, principal }) {
        return json(
          200,
          await hq.documents(
            principal.tenantId,
            query.warehouseId,
            decodeCursor(query.after ?? null),
            query.limit ?? 50,
          ),
        );
      },
    }),
    {
      method: 'get',
      path: '/hq-api/api/stock-documents/:id',
      auth: 'bearer',
      body: 'none',
      doc: {
        operationId: 'getStockDocument',
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
        operationId: 'listDevices',
        summary: "The tenant's boxes: venue, program, update, head, lag, contact, clock offset, catalogue rev",
        responses: ok('the devices', HqDeviceList),
      },
      handle: async ({ principal }) => json(200, await hq.devices(principal.tenantId)),
    },
  ];
}
