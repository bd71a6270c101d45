import { Type } from '@sinclair/typebox';
import { json, type Route, route } from '../../../http/types.js';
import { invalidField } from '../../../shared/errors.js';
import { HqDocumentBody, HqOrderBody } from '../../../shared/hq-inbox.js';
import { UUID_PATTERN } from '../../../shared/types.js';
import { documentInput } from '../../../shared/stock-document-schemas.js';
import { LimitParam } from '../../../http/contracts/query.js';
import { ok } from '../../contracts.js';
import type { InboxService } from './service.js';

const UUID = new RegExp(UUID_PATTERN);
const Entry = Type.Object(
  {},
  {
    additionalProperties: true,
    description: 'an entry: id, kind, venue, rev, createdBy, createdAt, status, codes, device, resultAt, body',
  },
);

const venueParam = (v: string | undefined): string => {
  if (!v || !UUID.test(v)) throw invalidField('venueId', 'venueId must be a venue id (a UUID)');
  return v;
};

/**
 * Headquarters' documents and orders for a venue's box (docs/sync.md "Documents from headquarters", "Orders created
 * at the central"): created with scope write (202, or 200 for the same entry again), followed with `read`.
 */
export function inboxRoutes(inbox: InboxService): Route[] {
  const base = '/hq-api/api';
  return [
    route({
      method: 'post',
      path: `${base}/venues/:venueId/documents`,
      auth: 'write',
      body: 'json',
      schema: { body: HqDocumentBody },
      doc: {
        operationId: 'createHqDocument',
        summary: "A stock document for a venue's box to book (PZ, WZ, RW, MM, Inventory)",
        params: { venueId: 'the venue' },
        description:
          "The box's own document body and rules (its warehouse API's), with the document's id, kind and warehouse.",
        responses: {
          ...ok('the same entry again', Entry),
          202: { description: 'the entry, on its way to the box', schema: Entry },
        },
      },
      async handle({ req, principal, body, valid }) {
        const venueId = venueParam(req.params.venueId);
        const head = valid();
        // The box's own rules for the body (pointers as the box's warehouse API gives them).
        const doc = documentInput(head.kind, head);
        const r = await inbox.createDocument(
          principal.tenantId,
          principal.userId,
          venueId,
          head,
          body as Record<string, unknown>,
          doc,
        );
        return json(r.created ? 202 : 200, r.entry);
      },
    }),
    route({
      method: 'post',
      path: `${base}/orders`,
      auth: 'write',
      body: 'json',
      schema: { body: HqOrderBody },
      doc: {
        operationId: 'createHqOrder',
        summary: "An order for a venue's box to apply (a call centre's order)",
        responses: {
          ...ok('the same entry again', Entry),
          202: { description: 'the entry, on its way to the box', schema: Entry },
        },
      },
      async handle({ principal, valid }) {
        const r = await inbox.createOrder(principal.tenantId, principal.userId, valid());
        return json(r.created ? 202 : 200, r.entry);
      },
    }),
    route({
      method: 'get',
      path: `${base}/inbox`,
      auth: 'bearer',
      body: 'none',
      schema: {
        query: Type.Object({
          venueId: Type.Optional(Type.String({ pattern: UUID_PATTERN, description: "one venue's entries (UUID)" })),
          limit: LimitParam(50, 200),
        }),
      },
      doc: {
        operationId: 'listInbox',
        summary: "Headquarters' entries, newest first, with what the boxes reported",
        responses: ok('the entries', Type.Object({ items: Type.Array(Entry) })),
      },
      handle: async ({ query, principal }) =>
        json(200, { items: await inbox.list(principal.tenantId, query.venueId, query.limit ?? 50) }),
    }),
    {
      method: 'get',
      path: `${base}/inbox/:id`,
      auth: 'bearer',
      body: 'none',
      doc: {
        operationId: 'getInboxEntry',
        summary: 'One entry and what its box reported',
        params: { id: 'the entry id' },
        responses: ok('the entry', Entry),
      },
      handle: async ({ req, principal }) => json(200, await inbox.get(principal.tenantId, req.params.id!)),
    },
  ];
}
