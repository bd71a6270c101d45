import { isoOf } from '../../../shared/clock.js';
import { newId7 } from '../../../shared/ids.js';
import { chainHash, envelopeText, GENESIS_HASH } from '../../../shared/sync-protocol.js';
import type { EnvelopeBodies, EnvelopeKind } from '../../../shared/sync-messages.js';
import type { SyncRepo } from '../repo.js';

/**
 * The outbox writer: every module that changes what the central keeps (orders, stock documents, warehouses,
 * sold-out flags) calls `append` inside the transaction of the change, so there is no change without its
 * event and no event without its change (a rolled-back savepoint takes its event with it).
 */
export function createOutbox(repo: SyncRepo) {
  let onAppend: () => void = () => undefined;
  return {
    /** Called after each append (inside the transaction): the sender sends after its flush delay, by then committed. */
    onAppend(fn: () => void): void {
      onAppend = fn;
    },
    /**
     * Appends one event and returns its seq. `body` is the event's body, or its JSON text when the caller has
     * it already (the order the socket pushes is serialised once). The number and the chain continue from the
     * newest row, read in this transaction: nothing cached can go stale when a transaction rolls back. The newest
     * number never goes down (`prune` keeps the newest row; a restore puts rows back at numbers at least as
     * high), so no number is given twice.
     */
    append<K extends EnvelopeKind>(
      tenantId: string,
      kind: K,
      aggregateId: string,
      body: EnvelopeBodies[K] | { json: string },
      nowMs: number,
    ): number {
      const eventId = newId7(nowMs);
      const bodyJson = 'json' in body && typeof body.json === 'string' ? body.json : JSON.stringify(body);
      const envelope = envelopeText(
        { eventId, tenant: tenantId, aggregate: aggregateId, kind, boxTime: isoOf(nowMs) },
        bodyJson,
      );
      const last = repo.last();
      const seq = repo.insert({
        seq: (last?.seq ?? 0) + 1,
        eventId,
        tenantId,
        kind,
        aggregateId,
        envelope,
        chainHash: chainHash(last?.chainHash ?? GENESIS_HASH, envelope),
        createdMs: nowMs,
      });
      onAppend();
      return seq;
    },
  };
}
export type Outbox = ReturnType<typeof createOutbox>;
