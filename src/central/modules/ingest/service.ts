import { AppError, problem, STATUS, unauthorized } from '../../../shared/errors.js';
import { isUuid } from '../../../shared/ids.js';
import {
  chainHash,
  type DecodedBatch,
  GENESIS_HASH,
  type SyncRejection,
  verifyDetached,
} from '../../../shared/sync-protocol.js';
import type { BatchAck, Head } from '../../../shared/sync-messages.js';
import { type Client, inTransaction, type Pool } from '../../db/pool.js';
import { isAcceptableKey } from '../../../shared/public-key.js';
import type { BoxClock } from '../devices/box-clock.js';
import { createDeviceRepo, type DeviceRow } from '../devices/repo.js';
import {
  checkEvent,
  flushOrders,
  type KnownIds,
  NOT_JSON,
  noneKnown,
  projectEvent,
  readEnvelope,
  RuleBroken,
} from '../projections/project.js';
import type { PendingOrder } from '../projections/repo.js';
import { readBatch } from './frame.js';
import type { IngestLimiter } from './limiter.js';
import { createIngestRepo, type RawEvent, textSafe } from './repo.js';

/** A 409 that tells the box where to resume: its body carries expectedSeq and head (SyncErrorBody). */
export class SyncConflict extends AppError {
  constructor(
    code: Extract<SyncRejection, 'syncGap' | 'syncDiverged'>,
    message: string,
    readonly expectedSeq: number,
    readonly head: Head,
  ) {
    super(STATUS[code], message, [problem(code, message, [String(expectedSeq)])]);
  }
}

const invalidBatch = (message: string): AppError => AppError.of('invalidBatch', message);

export interface IngestDeps {
  pool: Pool;
  limiter: IngestLimiter;
  /** Makes this month's and next month's event partitions when a new month is reached. */
  ensurePartitions: () => Promise<void>;
}

/**
 * One batch, one transaction (docs/sync.md "Sync to the central node"): checks that need no database first (framing, count,
 * protocol: frame.ts), then a central slot (429 when busy), the device's key, signature and chain, only then the
 * device's slot (so a request that merely names a device cannot take it), then the locked head decides what is
 * new, new events are stored and projected, the head advances, COMMIT, and only then the acknowledgement.
 */
export function createIngestService(deps: IngestDeps) {
  const devices = createDeviceRepo(deps.pool);

  /** Signature and chain: the device's key signed the header, and the events hash to its lastHash. */
  function checkAuthentic(batch: DecodedBatch, device: DeviceRow | undefined): string[] {
    const h = batch.header;
    if (device?.status !== 'active' || device.keyId !== h.keyId)
      throw unauthorized('unknown or revoked device, or unknown key');
    // A small-order key enrolled before enrolment refused them would verify forgeries: never trusted.
    if (!isAcceptableKey(device.publicKey))
      throw unauthorized('the device key is a small-order point; enrol the device again');
    if (!verifyDetached(Buffer.from(batch.headerText, 'utf8'), batch.signature, device.publicKey))
      throw unauthorized('bad batch signature');
    const hashes: string[] = [];
    let hash = h.prevHash;
    for (const e of batch.envelopes) {
      hash = chainHash(hash, e);
      hashes.push(hash);
    }
    if (hash !== h.lastHash) throw invalidBatch('the events do not hash to lastHash (the batch was altered)');
    return hashes;
  }

  async function apply(client: Client, batch: DecodedBatch, hashes: string[]): Promise<BatchAck> {
    const h = batch.header;
    const receivedMs = Date.now();
    const repo = createIngestRepo(client);
    const device = await createDeviceRepo(client).deviceForUpdate(h.tenant, h.deviceId);
    // Revoked (or re-keyed) since the first look, which took no lock.
    if (device?.status !== 'active' || device.keyId !== h.keyId)
      throw unauthorized('unknown or revoked device, or unknown key');
    const head = device.head;
    const next = head.seq + 1;
    if (h.epoch < head.epoch)
      throw new SyncConflict('syncGap', `epoch ${h.epoch} is older than the central's ${head.epoch}`, next, head);
    if (h.firstSeq > next)
      throw new SyncConflict(
        'syncGap',
        `the central expects seq ${next}, the batch starts at ${h.firstSeq}`,
        next,
        head,
      );
    const overlapTo = Math.min(h.lastSeq, head.seq);
    const stored = await repo.hashes(h.tenant, h.deviceId, h.firstSeq - 1, overlapTo);
    const prevStored =
      h.firstSeq === 1 ? GENESIS_HASH : h.firstSeq - 1 === head.seq ? head.hash : stored.get(h.firstSeq - 1);
    if (prevStored !== h.prevHash) {
      throw new SyncConflict(
        'syncDiverged',
        `prevHash differs from the central's chain at seq ${h.firstSeq - 1}`,
        next,
        head,
      );
    }
    for (let seq = h.firstSeq; seq <= overlapTo; seq++) {
      if (stored.get(seq) !== hashes[seq - h.firstSeq]) {
        throw new SyncConflict('syncDiverged', `event ${seq} differs from the one the central holds`, next, head);
      }
    }
    const fresh: RawEvent[] = [];
    for (let seq = Math.max(h.firstSeq, next); seq <= h.lastSeq; seq++) {
      const envelope = batch.envelopes[seq - h.firstSeq]!;
      // Parsed once: for the raw event's columns here and for its projection.
      const value = readEnvelope(envelope);
      fresh.push({ seq, envelope, value, hash: hashes[seq - h.firstSeq]!, ...columnsOf(value) });
    }
    await repo.insertEvents(h.tenant, h.deviceId, h.epoch, fresh);
    // The box's times move to the central's by the offset of its last hello (docs/sync.md "Clocks").
    await projectAll(client, h.tenant, h.deviceId, fresh, { offsetMs: device.clockOffsetMs, receivedMs });
    if (h.lastSeq > head.seq) {
      // The proof of the new head: this batch's header and signature, as received (TailResponse.proof).
      await createDeviceRepo(client).advanceHead(
        h.tenant,
        h.deviceId,
        { epoch: h.epoch, seq: h.lastSeq, hash: h.lastHash },
        Math.max(h.pendingSeq, h.lastSeq),
        {
          header: batch.headerText,
          signature: batch.signature,
        },
      );
    } else {
      // A duplicate: the head and its proof stay those of the batch that set them.
      await createDeviceRepo(client).recordContact(h.tenant, h.deviceId, h.pendingSeq);
    }
    const deadLetters = await repo.deadLetters(h.tenant, h.deviceId, h.firstSeq, h.lastSeq);
    return { ackedSeq: h.lastSeq, ackedHash: h.lastHash, deadLetters };
  }

  /**
   * The batch's projections under one savepoint, its order events in two statements at the end: nearly every
   * batch keeps every rule, and round trips per event (a savepoint and its release, an upsert and a version)
   * were most of the ingest's time. When an event breaks a rule, the
   * batch's projections are undone and done again one savepoint per event, so only that event is set aside.
   */
  async function projectAll(
    client: Client,
    tenantId: string,
    deviceId: string,
    events: RawEvent[],
    clock: BoxClock,
  ): Promise<void> {
    const known = noneKnown();
    await client.query('SAVEPOINT batch');
    try {
      const orders: PendingOrder[] = [];
      for (const e of events)
        await projectEvent(
          client,
          { tenantId, deviceId, seq: e.seq, clock },
          checkEvent(e.value, tenantId),
          known,
          orders,
        );
      await flushOrders(client, tenantId, deviceId, orders);
      await client.query('RELEASE SAVEPOINT batch');
      return;
    } catch (err) {
      if (!isEventFault(err)) throw err;
      await client.query('ROLLBACK TO SAVEPOINT batch');
    }
    // Afresh: what the undone projections had learnt (a warehouse one of them created) is undone too.
    const relearnt = noneKnown();
    for (const e of events) await projectOne(client, tenantId, deviceId, e, relearnt, clock);
  }

  /** Each event in its own savepoint: one that breaks a rule is undone alone and kept as a dead letter. */
  async function projectOne(
    client: Client,
    tenantId: string,
    deviceId: string,
    e: RawEvent,
    known: KnownIds,
    clock: BoxClock,
  ): Promise<void> {
    await client.query('SAVEPOINT event');
    try {
      await projectEvent(client, { tenantId, deviceId, seq: e.seq, clock }, checkEvent(e.value, tenantId), known);
      await client.query('RELEASE SAVEPOINT event');
    } catch (err) {
      if (!isEventFault(err)) throw err;
      await client.query('ROLLBACK TO SAVEPOINT event');
      const reason = err instanceof RuleBroken ? err.message : `projection failed: ${(err as Error).message}`;
      await createIngestRepo(client).insertDeadLetter(
        tenantId,
        deviceId,
        e.seq,
        e.eventId,
        reason.slice(0, 500),
        e.envelope,
      );
    }
  }

  return {
    async ingest(bytes: Buffer): Promise<BatchAck> {
      const batch = readBatch(bytes);
      const h = batch.header;
      // The central's slot before any database work: a hundred boxes at once get 429s, never pool timeouts.
      const admission = deps.limiter.admit();
      try {
        const hashes = checkAuthentic(batch, await devices.device(h.tenant, h.deviceId));
        admission.claimDevice(`${h.tenant}\n${h.deviceId}`);
        await deps.ensurePartitions();
        return await inTransaction(deps.pool, (client) => apply(client, batch, hashes));
      } finally {
        admission.release();
      }
    },
  };
}

/**
 * A rule the event broke, or an SQL error its own data caused (a constraint, a value out of range): a dead
 * letter. Deadlocks, serialization failures, shutdown and connection loss (SQLSTATE classes 40, 57, 08, 53)
 * are the central's trouble, not the event's: the batch fails and the box sends it again.
 */
export function isEventFault(err: unknown): boolean {
  if (err instanceof RuleBroken) return true;
  const code = (err as { code?: unknown })?.code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) && !/^(40|57|08|53)/.test(code);
}

/** The raw event's searchable columns, read leniently: a malformed envelope is stored too (as a dead letter). */
function columnsOf(value: unknown): Pick<RawEvent, 'eventId' | 'kind' | 'stream' | 'aggregate'> {
  if (value === NOT_JSON || typeof value !== 'object' || value === null)
    return { eventId: null, kind: null, stream: null, aggregate: null };
  const e = value as Record<string, unknown>;
  // A "\u0000" escape parses to a NUL, which a text column refuses: that would fail the batch, not the event.
  const str = (v: unknown) => (typeof v === 'string' ? textSafe(v.slice(0, 200)) : null);
  return {
    eventId: typeof e.eventId === 'string' && isUuid(e.eventId) ? e.eventId : null,
    kind: str(e.kind),
    stream: str(e.stream),
    aggregate: str(e.aggregate),
  };
}
