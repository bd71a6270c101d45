import type { Logger } from '../../../log.js';
import { chainHash, GENESIS_HASH, verifyDetached } from '../../../shared/sync-protocol.js';
import {
  type BatchHeader,
  type Envelope,
  type Head,
  SYNC_CHECKS,
  type TailResponse,
} from '../../../shared/sync-messages.js';
import type { SyncRepo } from '../repo.js';

/**
 * Puts an event the central kept, and this box lost, back into the box's own tables (orders, stock documents,
 * warehouses, sold-out flags), without writing the outbox: the central has it already. `newer` holds the
 * aggregates this box changed since (their local state is newer in the sequence and stays).
 */
export interface Reinstater {
  apply(envelope: Envelope, newer: Set<string>): void;
}

export interface ReconcileDeps {
  repo: SyncRepo;
  log: Logger;
  now(): number;
  reinstate: Reinstater;
  /** This box's identity: reconciling takes only events its own key signed for. */
  device: { deviceId: string; publicKey: Uint8Array };
  fetchTail(after: number, limit: number): Promise<TailResponse>;
}

/** The box's outbox and the central's head disagree in a way only an operator can mend. */
export class SyncStateError extends Error {}

const PAGE = 500;

/**
 * Moves the sender to where the central is (docs/sync.md "Sync to the central node", "Restores"):
 * - the central has our event at its head (a lost acknowledgement; a central restored from a backup): go on
 *   from its head, sending again what it lost;
 * - the central is ahead of everything we have (this box was restored from an old copy), or holds another
 *   event at the same seq: fetch what we lost, apply it as already synced, and renumber our own newer events
 *   after it in a new epoch (their event ids unchanged).
 */
export async function reconcile(deps: ReconcileDeps, head: Head): Promise<void> {
  const { repo, log } = deps;
  const state = repo.state();
  if (head.seq === state.ackedSeq && head.hash === state.ackedHash) return;
  const newest = repo.last()?.seq ?? 0;
  const oldest = repo.oldestSeq();
  if (head.seq <= newest && oldest !== undefined && head.seq < oldest - 1) {
    throw new SyncStateError(
      `the central's head (seq ${head.seq}) is older than the oldest event this box keeps (seq ${oldest}): ` +
        'those events are past the retention period and cannot be sent again',
    );
  }
  const mine = head.seq === 0 ? GENESIS_HASH : repo.one(head.seq)?.chainHash;
  if (mine === head.hash) {
    if (head.seq < state.ackedSeq) {
      log.warn(
        { head, ackedSeq: state.ackedSeq },
        'the central is behind this box (restored from a backup?): sending again from its head',
      );
    } else {
      log.info({ head, ackedSeq: state.ackedSeq }, 'the central had taken events whose acknowledgement was lost');
    }
    repo.setPosition(head.seq, head.hash);
    return;
  }
  await fetchAndReinstate(deps, head);
}

async function fetchAndReinstate(deps: ReconcileDeps, head: Head): Promise<void> {
  const { repo, log } = deps;
  const state = repo.state();
  log.warn(
    { head, ackedSeq: state.ackedSeq, newest: repo.last()?.seq ?? 0 },
    'the central holds events this box does not have (restored from an old copy?): fetching them',
  );
  // The central took everything up to our acknowledged position; walk its events from there while they are ours.
  let common = state.ackedSeq;
  let prev = state.ackedHash;
  let diverged = false;
  let proof: TailResponse['proof'] = null;
  repo.fetchedClear();
  for (let after = state.ackedSeq; after < head.seq; ) {
    const page = await deps.fetchTail(after, PAGE);
    if (!SYNC_CHECKS.tail.Check(page))
      throw new SyncStateError('the central answered the tail fetch with an unexpected body');
    proof = page.proof ?? null;
    if (page.events.length === 0)
      throw new SyncStateError(`the central sent no events after seq ${after}, below its head ${head.seq}`);
    repo.transaction(() => {
      for (const ev of page.events) {
        if (ev.seq !== after + 1 || chainHash(prev, ev.envelope) !== ev.hash) {
          throw new SyncStateError(`the central's event ${ev.seq} does not continue the chain at seq ${after}`);
        }
        if (!diverged && repo.one(ev.seq)?.chainHash === ev.hash) common = ev.seq;
        else {
          diverged = true;
          repo.fetchedPut({ seq: ev.seq, epoch: ev.epoch, chainHash: ev.hash, envelope: ev.envelope });
        }
        prev = ev.hash;
        after = ev.seq;
      }
    });
  }
  if (prev !== head.hash) throw new SyncStateError("the central's events do not reach its own head");
  // The central hashed those events itself: only this box's own signature on the head proves it sent them.
  if (!signedByThisBox(proof, head, deps.device)) {
    repo.fetchedClear();
    throw new SyncStateError(
      `the central's head (seq ${head.seq}) carries no batch signature of this box: its events are not restored`,
    );
  }

  const now = deps.now();
  const applied = repo.transaction(() => {
    const ours = repo.after(common, Number.MAX_SAFE_INTEGER);
    const lost = repo.fetchedAll();
    repo.deleteAfter(common);
    const newer = new Set(ours.map((r) => r.aggregateId));
    for (const ev of lost) {
      const envelope = JSON.parse(ev.envelope) as Envelope;
      repo.insert({
        seq: ev.seq,
        eventId: envelope.eventId,
        tenantId: envelope.tenant,
        kind: envelope.kind,
        aggregateId: envelope.aggregate,
        envelope: ev.envelope,
        chainHash: ev.chainHash,
        createdMs: now,
      });
      deps.reinstate.apply(envelope, newer);
    }
    const epoch = Math.max(state.epoch, head.epoch) + 1;
    let seq = head.seq;
    let hash = head.hash;
    for (const r of ours) {
      seq += 1;
      hash = chainHash(hash, r.envelope);
      repo.insert({ ...r, seq, chainHash: hash });
    }
    repo.setEpoch(epoch);
    repo.setPosition(head.seq, head.hash);
    repo.fetchedClear();
    return { restored: lost.length, renumbered: ours.length, epoch };
  });
  log.warn(
    { ...applied, head },
    "restored the events the central kept; this box's newer events follow them in a new epoch",
  );
}

/**
 * Whether `proof` is a batch header this device signed whose lastSeq and lastHash are the head: since each chain
 * hash covers every event before it, that signature covers every event up to the head (src/shared/sync-protocol.ts).
 */
function signedByThisBox(proof: TailResponse['proof'], head: Head, device: ReconcileDeps['device']): boolean {
  if (!proof || typeof proof.header !== 'string' || typeof proof.signature !== 'string') return false;
  let header: Partial<BatchHeader>;
  try {
    header = JSON.parse(proof.header) as Partial<BatchHeader>;
  } catch {
    return false;
  }
  if (header.deviceId !== device.deviceId || header.lastSeq !== head.seq || header.lastHash !== head.hash) return false;
  return verifyDetached(Buffer.from(proof.header, 'utf8'), Buffer.from(proof.signature, 'base64'), device.publicKey);
}
