import { canonicalJson } from '../../../shared/catalogue-protocol.js';
import { AppError, invalidField, notFound } from '../../../shared/errors.js';
import { CENTRAL_SOURCE, type HqDocumentHead, type HqOrderBody, type InboxKind } from '../../../shared/hq-inbox.js';
import type { DocumentInput } from '../../../shared/stock-document-schemas.js';
import { type Pool, inTransaction } from '../../db/pool.js';
import { createCatalogueRepo } from '../catalogue/repo.js';
import { createInboxRepo, type InboxView } from './repo.js';

/** What a create answers: 202 for a new entry, 200 for the same entry sent again. */
export interface Created {
  created: boolean;
  entry: InboxView;
}

/**
 * Documents and orders headquarters sends to a venue's box (docs/sync.md "Documents from headquarters", "Orders
 * created at the central"). One transaction each: the tenant's next catalogue rev first (locking its counter,
 * so the checks below hold until COMMIT and entries commit in rev order), the checks, the entry, NOTIFY (the
 * venue's box is woken in its long poll). The same id with the same content again is answered with the entry
 * as it stands, and takes no rev; the same id with other content is a 409.
 */
export function createInboxService(pool: Pool) {
  async function create(
    tenantId: string,
    userId: string,
    entry: { id: string; venue: string; kind: InboxKind; body: unknown },
    check: (catalogue: ReturnType<typeof createCatalogueRepo>) => Promise<void>,
  ): Promise<Created> {
    const result = await inTransaction(pool, async (client) => {
      const catalogue = createCatalogueRepo(client);
      const inbox = createInboxRepo(client);
      const rev = await catalogue.nextRev(tenantId);
      const existing = await inbox.get(tenantId, entry.id);
      if (existing) {
        const same =
          existing.kind === entry.kind &&
          existing.venue === entry.venue &&
          canonicalJson(existing.body) === canonicalJson(entry.body);
        if (!same)
          throw AppError.of('conflict', `${existing.kind} ${entry.id} was sent before with other content`, [entry.id]);
        // Nothing new: the rev taken above rolls back with this transaction.
        throw new Replay(existing);
      }
      await check(catalogue);
      await inbox.insert(tenantId, { ...entry, createdBy: userId }, rev);
      await catalogue.notify(tenantId);
      return rev;
    }).catch((err: unknown) => {
      if (err instanceof Replay) return err.entry;
      throw err;
    });
    if (typeof result !== 'number') return { created: false, entry: result };
    return { created: true, entry: (await createInboxRepo(pool).get(tenantId, entry.id))! };
  }

  /** The venue (live in the catalogue) and its warehouse. */
  async function liveVenue(catalogue: ReturnType<typeof createCatalogueRepo>, tenantId: string, venueId: string) {
    const venue = await catalogue.live('venue', tenantId, venueId);
    if (!venue) throw notFound('venue');
    return { warehouse: venue.warehouse as string };
  }

  return {
    /**
     * A stock document for the venue's box (the box's own document body, checked as the box checks it): it books
     * into the venue's warehouse (an MM: out of any catalogue warehouse, e.g. the central one, into it).
     */
    createDocument(
      tenantId: string,
      userId: string,
      venueId: string,
      head: HqDocumentHead,
      body: Record<string, unknown>,
      doc: DocumentInput,
    ) {
      return create(tenantId, userId, { id: head.id, venue: venueId, kind: 'document', body }, async (catalogue) => {
        const { warehouse } = await liveVenue(catalogue, tenantId, venueId);
        if (!(await catalogue.live('warehouse', tenantId, head.warehouse))) {
          throw invalidField('/warehouse', `no warehouse ${head.warehouse} in the catalogue`);
        }
        if (doc.targetWarehouse !== undefined && !(await catalogue.live('warehouse', tenantId, doc.targetWarehouse))) {
          throw invalidField('/targetWarehouse', `no warehouse ${doc.targetWarehouse} in the catalogue`);
        }
        if (doc.targetWarehouse === head.warehouse)
          throw invalidField('/targetWarehouse', 'targetWarehouse must be another warehouse');
        const into = head.kind === 'MM' ? doc.targetWarehouse : head.warehouse;
        if (into !== warehouse) {
          throw invalidField(
            head.kind === 'MM' ? '/targetWarehouse' : '/warehouse',
            `a document for venue ${venueId} books into its warehouse ${warehouse}`,
          );
        }
      });
    },

    /** An order for the box of its venue (one bucket); the order's id is the entry's id. */
    createOrder(tenantId: string, userId: string, order: HqOrderBody) {
      if (order.buckets.length !== 1)
        throw invalidField('/buckets', 'an order created at the central names exactly one venue');
      const venue = order.buckets[0]!.venue;
      const body = { ...order, extra: { ...order.extra, 'X-SOURCE': CENTRAL_SOURCE } };
      return create(tenantId, userId, { id: order.id, venue, kind: 'order', body }, async (catalogue) => {
        await liveVenue(catalogue, tenantId, venue).catch(() => {
          throw invalidField('/buckets/0/venue', `no venue ${venue} in the catalogue`);
        });
      });
    },

    async get(tenantId: string, id: string): Promise<InboxView> {
      const entry = await createInboxRepo(pool).get(tenantId, id);
      if (!entry) throw notFound('entry');
      return entry;
    },
    list: (tenantId: string, venueId: string | undefined, limit: number) =>
      createInboxRepo(pool).list(tenantId, venueId, limit),
  };
}
export type InboxService = ReturnType<typeof createInboxService>;

/** The entry was there already with the same content: roll back the rev taken, answer with it. */
class Replay extends Error {
  constructor(readonly entry: InboxView) {
    super('replay');
  }
}
