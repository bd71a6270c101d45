import { json, type Route } from '../../../http/types.js';
import { invalidField } from '../../../shared/errors.js';
import { HqDocumentHead, HqOrderBody } from '../../../shared/hq-inbox.js';
import { UUID_PATTERN } from '../../../shared/types.js';
import { parseDocument } from '../../../shared/stock-document-schemas.js';
import { compile, limitOf } from '../../../shared/validate.js';
import type { InboxService } from './service.js';

const checkHead = compile(HqDocumentHead);
const checkOrder = compile(HqOrderBody);
const UUID = new RegExp(UUID_PATTERN);

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
    {
      method: 'post', path: `${base}/venues/:venueId/documents`, auth: 'write', body: 'json',
      async handle({ req, principal, body }) {
        const venueId = venueParam(req.params.venueId);
        const head = checkHead(body);
        // The box's own rules for the body (pointers as the box's warehouse API gives them).
        const doc = parseDocument(head.kind, body);
        const r = await inbox.createDocument(principal.tenantId, principal.userId, venueId, head, body as Record<string, unknown>, doc);
        return json(r.created ? 202 : 200, r.entry);
      },
    },
    {
      method: 'post', path: `${base}/orders`, auth: 'write', body: 'json',
      async handle({ principal, body }) {
        const r = await inbox.createOrder(principal.tenantId, principal.userId, checkOrder(body));
        return json(r.created ? 202 : 200, r.entry);
      },
    },
    {
      method: 'get', path: `${base}/inbox`, auth: 'bearer', body: 'none',
      async handle({ req, principal }) {
        const venue = req.query.get('venueId');
        return json(200, { items: await inbox.list(principal.tenantId, venue === null ? undefined : venueParam(venue), limitOf(req.query, 50, 200)) });
      },
    },
    {
      method: 'get', path: `${base}/inbox/:id`, auth: 'bearer', body: 'none',
      handle: async ({ req, principal }) => json(200, await inbox.get(principal.tenantId, req.params.id!)),
    },
  ];
}
