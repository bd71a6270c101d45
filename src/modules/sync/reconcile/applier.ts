import type { Logger } from '../../../log.js';
import type { Envelope, EnvelopeBodies } from '../../../shared/sync-messages.js';
import type { Reinstater } from './reconcile.js';

/** What each module offers to put its data back from the central's copy (no outbox events). */
export interface ReinstateTargets {
  order(tenantId: string, body: EnvelopeBodies['order.changed']): void;
  document(tenantId: string, body: EnvelopeBodies['stock.document']): void;
  warehouse(tenantId: string, body: EnvelopeBodies['warehouse.changed']): void;
  soldOut(tenantId: string, body: EnvelopeBodies['soldout.changed']): void;
  /** Runs `fn` in a savepoint: one event that cannot be put back rolls back alone. */
  savepoint(fn: () => void): void;
}

/**
 * Dispatches the events a restored box fetched from its central to the modules that own them. An order or
 * sold-out flag this box changed since keeps its newer local state. An event that cannot be put back (a claim
 * code taken meanwhile by a new order, a document that would drive stock below zero) is logged and skipped:
 * the central has it, and putting back must not stop the venue.
 */
export function createReinstater(targets: ReinstateTargets, log: Logger): Reinstater {
  return {
    apply(envelope: Envelope, newer: Set<string>): void {
      if ((envelope.kind === 'order.changed' || envelope.kind === 'soldout.changed') && newer.has(envelope.aggregate))
        return;
      try {
        targets.savepoint(() => {
          const body = envelope.body as never;
          if (envelope.kind === 'order.changed') targets.order(envelope.tenant, body);
          else if (envelope.kind === 'stock.document') targets.document(envelope.tenant, body);
          else if (envelope.kind === 'warehouse.changed') targets.warehouse(envelope.tenant, body);
          else if (envelope.kind === 'soldout.changed') targets.soldOut(envelope.tenant, body);
        });
      } catch (err) {
        log.error(
          { err, eventId: envelope.eventId, kind: envelope.kind, aggregate: envelope.aggregate },
          'could not put back an event from the central',
        );
      }
    },
  };
}
