import type { StandbyLeaseRequest } from '../../shared/sync-messages.js';
import { SYNC_CHECKS } from '../../shared/sync-messages.js';
import { CentralError, centralClient } from './client.js';
import type { Device } from './enrolment/device.js';
import { deviceSigner } from './enrolment/signer.js';

/**
 * What the central, the witness of a standby pair, said of a lease (docs/sync.md "The standby lease"):
 * - `granted`: the lease of `term` is `holder`'s for `ttlMs` counted from the central's answer. A box counts it from
 *   before it sent the request, so its own view of the lease never outlasts the central's.
 * - `refused`: the central answered and did not grant it. A 409 names the lease it holds now (`term`, `holder`): a
 *   primary whose term is lower has been replaced. Any other refusal (401: this device is unknown at the central or
 *   revoked; 400, 404, 426) has `term`, `holder` and `ttlMs` null.
 * - `unreachable`: no answer to go by (network error, timeout, 408, 429, 5xx, or an answer this box cannot read).
 *   Neither a grant nor a refusal: a primary keeps the lease it has until it runs out.
 */
export type LeaseAnswer =
  | { kind: 'granted'; term: number; holder: string; ttlMs: number }
  | { kind: 'refused'; term: number | null; holder: string | null; ttlMs: number | null; message: string }
  | { kind: 'unreachable'; reason: string };

/**
 * Asks the device's central for the standby lease, signed by the device key as its other requests are. Never
 * throws for anything the central or the network does: every outcome is a LeaseAnswer.
 */
export async function requestStandbyLease(
  device: Device,
  body: StandbyLeaseRequest,
  timeoutMs: number,
): Promise<LeaseAnswer> {
  let answer: unknown;
  try {
    answer = await centralClient.standbyLease(device, deviceSigner(device.secretKey), body, {
      requestTimeoutMs: timeoutMs,
    });
  } catch (err) {
    if (!(err instanceof CentralError)) throw err;
    return refusalOf(err);
  }
  // A grant counts only if it is this box's lease of this term: anything else is not understood, so not a grant.
  if (
    SYNC_CHECKS.leaseGranted.Check(answer) &&
    answer.term === body.term &&
    answer.holder === body.holder.toLowerCase()
  ) {
    return { kind: 'granted', term: answer.term, holder: answer.holder, ttlMs: answer.ttlMs };
  }
  return { kind: 'unreachable', reason: 'the central answered 200 with a lease this box did not ask for' };
}

function refusalOf(err: CentralError): LeaseAnswer {
  const { status } = err;
  if (status === 0 || status === 408 || status === 429 || status >= 500) {
    return { kind: 'unreachable', reason: err.message };
  }
  if (status === 409) {
    const body: unknown = err.body;
    if (!SYNC_CHECKS.leaseRefused.Check(body))
      return { kind: 'unreachable', reason: `the central answered 409 without a lease: ${err.message}` };
    return { kind: 'refused', term: body.term, holder: body.holder, ttlMs: body.ttlMs, message: body.message };
  }
  const message =
    status === 401 || status === 403
      ? `the central does not know this device or revoked it (enrol the box again): ${err.message}`
      : err.message;
  return { kind: 'refused', term: null, holder: null, ttlMs: null, message };
}
