import type { Logger } from '../../log.js';
import type { Envelope, EventBodies } from '../../shared/sync-messages.js';
import type { RestoreApplier } from './restore.js';

/** What each module offers to put its data back from the central's copy (no outbox events). */
export interface RestoreTargets {
  order(tenantId: string, body: EventBodies['order.changed']): void;
  document(tenantId: string, body: EventBodies['stock.document']): void;
  warehouse(tenantId: string, body: EventBodies['warehouse.changed']): void;
  soldOut(tenantId: string, body: EventBodies['soldout.changed']): void;
  /** Runs `fn` in a savepoint: one event that cannot be put back rolls back alone. */
  savepoint(fn: () => void): void;
}

/**
 * Dispatches the events a restored box fetched from its central to the modules that own them. An order or
 * sold-out flag this box changed since keeps its newer local state. An event that cannot be put back (a claim
 * code taken meanwhile by a new order, a document that would drive stock below zero) is logged and skipped:
 * the central has it, and the restore must not stop the venue.
 */
export function createRestoreApplier(targets: RestoreTargets, log: Logger): RestoreApplier {
  return {
    apply(event: Envelope, newer: Set<string>): void {
      if ((event.kind === 'order.changed' || event.kind === 'soldout.changed') && newer.has(event.aggregate)) return;
      try {
        targets.savepoint(() => {
          const body = event.body as never;
          if (event.kind === 'order.changed') targets.order(event.tenant, body);
          else if (event.kind === 'stock.document') targets.document(event.tenant, body);
          else if (event.kind === 'warehouse.changed') targets.warehouse(event.tenant, body);
          else if (event.kind === 'soldout.changed') targets.soldOut(event.tenant, body);
        });
      } catch (err) {
        log.error({ err, eventId: event.eventId, kind: event.kind, aggregate: event.aggregate }, 'could not put back an event from the central');
      }
    },
  };
}
