import type { HttpRequest } from '../../../http/types.js';
import { problem, unauthorized } from '../../../shared/errors.js';
import type { StandbyLeaseGranted, StandbyLeaseRefused, StandbyLeaseRequest } from '../../../shared/sync-messages.js';
import { inTransaction, type Pool } from '../../db/pool.js';
import { createDeviceRepo, type DeviceRow } from './repo.js';

/** The lease a device's boxes hold at the central: its term, the box id holding it, until when (central's clock). */
export interface StoredLease {
  term: number;
  holder: string;
  untilMs: number;
}

/** Granted: the asker's lease is stored until now + TTL. Refused: why, in one line. */
export type LeaseDecision = { grant: true } | { grant: false; why: string };

/**
 * The witness's rule (docs/sync.md "The standby lease"). The term fences: a lower term never wins again, so at most
 * one box holds each term and an old primary learns it was replaced. A renewal (`claim: false`) keeps its own term
 * or moves to a higher one; a claim (`claim: true`, the standby's next term) waits until the lease it replaces has
 * run out, so a primary that is alive but cut off from its standby keeps its term until its lease ends.
 */
export function decideLease(stored: StoredLease | null, ask: StandbyLeaseRequest, nowMs: number): LeaseDecision {
  if (stored === null) return { grant: true };
  const own = stored.holder === ask.holder && stored.term === ask.term;
  if (own) return { grant: true };
  if (stored.term > ask.term) return { grant: false, why: `fenced: term ${stored.term} has taken over` };
  if (!ask.claim) {
    if (stored.term < ask.term) return { grant: true };
    return { grant: false, why: `term ${stored.term} is held by another box` };
  }
  if (stored.term === ask.term) return { grant: false, why: `term ${stored.term} was claimed by another box` };
  if (stored.untilMs > nowMs)
    return { grant: false, why: `the lease of term ${stored.term} is live for ${stored.untilMs - nowMs} ms more` };
  return { grant: true };
}

/**
 * The central's side of the standby lease: a signed request of the device (as a hello), decided in one transaction
 * with the device row locked, so two racing claims for a term cannot both win.
 */
export function createStandbyLease(
  pool: Pool,
  authenticate: (req: HttpRequest, body: string) => Promise<DeviceRow>,
  now: () => number,
  ttlMs: number,
) {
  return {
    async request(
      req: HttpRequest,
      bodyText: string,
      body: StandbyLeaseRequest,
    ): Promise<StandbyLeaseGranted | StandbyLeaseRefused> {
      const device = await authenticate(req, bodyText);
      // The uuid column keeps lower case: the holder is compared, and answered, as stored.
      const ask = { ...body, holder: body.holder.toLowerCase() };
      return inTransaction(pool, async (client) => {
        const repo = createDeviceRepo(client);
        const row = await repo.standbyLeaseForUpdate(device.tenantId, device.deviceId);
        // Revoked between the signature check and the lock: refused as any revoked device.
        if (row?.status !== 'active') throw unauthorized('unknown or revoked device');
        // Read after the lock: the clock of the request that decides, not of one that waited for it.
        const nowMs = now();
        const decision = decideLease(row.lease, ask, nowMs);
        if (decision.grant) {
          await repo.setStandbyLease(device.tenantId, device.deviceId, { ...ask, untilMs: nowMs + ttlMs });
          return { granted: true, term: ask.term, holder: ask.holder, ttlMs };
        }
        // A refusal is only ever of a stored lease (none stored: granted above).
        const held = row.lease!;
        const message = `standby lease refused: ${decision.why}`;
        return {
          granted: false,
          term: held.term,
          holder: held.holder,
          ttlMs,
          message,
          codes: [problem('conflict', message)],
        };
      });
    },
  };
}

export type StandbyLease = ReturnType<typeof createStandbyLease>;
