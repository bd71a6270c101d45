import { Type } from '@sinclair/typebox';
import { json, type Route } from '../../../http/types.js';
import { invalidField } from '../../../shared/errors.js';
import { limitOf } from '../../../shared/validate.js';
import { ok } from '../../contracts.js';
import { decodeCursor } from './cursor.js';
import type { HqService } from './service.js';
import { HqDeviceList } from '../devices/schemas.js';
import { StockDocumentDetail } from './schemas.js';

/** An optional id-like query parameter: absent, or 1..64 characters. */
function idParam(query: URLSearchParams, name: string, required = false): string | undefined {
  const value = query.get(name);
  if (value === null && !required) return undefined;
  if (value === null || value.length === 0 || value.length > 64) throw invalidField(name, `${name} must be an id`);
  return value;
}

const Id = (what: string) => Type.String({ description: what });
const Page = (what: string) =>
  Type.Object({
    items: Type.Array(Type.Object({}, { additionalProperties: true }), { description: what }),
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
          status: Type.Optional(Id('an order status')),
          deviceId: Type.Optional(Id('a device')),
          ...listQuery,
        }),
      },
      doc: {
        summary: "The tenant's orders, newest first by created",
        responses: ok('a page of Orders, each with deviceId and version', Page('Orders')),
      },
      async handle({ req, principal }) {
        const q = req.query;
        return json(
          200,
          await hq.orders(principal.tenantId, {
            venueId: idParam(q, 'venueId'),
            status: idParam(q, 'status'),
            deviceId: idParam(q, 'deviceId'),
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
