import type { HttpRequest } from '../../../http/types.js';
import { AppError } from '../../../shared/errors.js';
import {
  NONCE_PATTERN,
  newNonce,
  PROTOCOL,
  REQUEST_WINDOW_MS,
  type RequestStamp,
  TIMESTAMP_PATTERN,
} from '../../../shared/sync-protocol.js';
import type { Queryable } from '../../db/pool.js';

/**
 * What makes a signed request once-only at the central (docs/sync.md "Signed requests"): its timestamp within
 * REQUEST_WINDOW_MS of the central's clock moved by the offset of the device's last hello, and a nonce no central
 * process has seen from the device in twice that (a request accepted at t has a timestamp within the window of t,
 * so past t + 2 windows its timestamp alone refuses it). A hello outside the window (the box's clock was set since,
 * or it restarted on another clock) gets a one-time challenge to sign into the hello it sends again: a box whose
 * clock says 1970, or jumped back a year, still says hello, and a captured hello sent again is refused all the same.
 */

/** Live challenges a device may hold at once: a replayer sending old hellos cannot pile them up. */
const MAX_CHALLENGES = 8;

/**
 * The stamp of a signed request, from its headers. A request without one is from a box of protocol 1: null when
 * the central takes those for now (`central serve --accept-protocol-1`, while a fleet is upgraded), else 426.
 */
export function stampOf(req: HttpRequest, acceptProtocol1 = false): RequestStamp | null {
  const ts = req.headers['x-timestamp'];
  const nonce = req.headers['x-nonce'];
  const challenge = req.headers['x-challenge'];
  if (ts === undefined && nonce === undefined && challenge === undefined) {
    if (acceptProtocol1) return null;
    throw AppError.of(
      'unsupportedProtocol',
      `signed requests of protocol ${PROTOCOL} carry x-timestamp and x-nonce: update the box (docs/sync.md "Signed requests")`,
    );
  }
  if (!ts || !TIMESTAMP_PATTERN.test(ts) || !nonce || !NONCE_PATTERN.test(nonce))
    throw AppError.of('unauthorized', 'x-timestamp must be milliseconds and x-nonce 22 base64url characters');
  if (challenge !== undefined && !NONCE_PATTERN.test(challenge))
    throw AppError.of('unauthorized', 'x-challenge must be the 22 characters the central gave');
  return { timestampMs: Number(ts), nonce, challenge };
}

/** Whether a timestamp is within the window of the central's clock moved by the device's offset (none: 0). */
export const withinWindow = (stamp: RequestStamp, receivedMs: number, offsetMs: number | null): boolean =>
  Math.abs(stamp.timestampMs - (receivedMs + (offsetMs ?? 0))) <= REQUEST_WINDOW_MS;

/**
 * A hello's timestamp: within the window of the device's last offset, or, before its first hello, anything (the
 * hello is what measures the offset). Outside it, a challenge the box signed is spent; else a new one is refused
 * with (`requestStale`, args[0]).
 */
export async function checkHelloStamp(
  db: Queryable,
  device: { tenantId: string; deviceId: string; clockOffsetMs: number | null },
  stamp: RequestStamp,
  receivedMs: number,
): Promise<void> {
  if (device.clockOffsetMs === null || withinWindow(stamp, receivedMs, device.clockOffsetMs)) return;
  if (stamp.challenge && (await spendChallenge(db, device, stamp.challenge))) return;
  const challenge = await newChallenge(db, device);
  throw AppError.of(
    'requestStale',
    "the hello's x-timestamp is outside the window of the device's last offset: sign this challenge into it",
    challenge ? [challenge] : [],
  );
}

/** Any other signed request: outside the window is refused (the box's next hello measures the offset again). */
export function checkRequestStamp(stamp: RequestStamp, receivedMs: number, offsetMs: number | null): void {
  if (!withinWindow(stamp, receivedMs, offsetMs))
    throw AppError.of('requestStale', "x-timestamp is outside the window of the device's clock: say hello first");
}

/**
 * Records the nonce; a nonce the device used within twice the window is a replay: 401 `requestReplayed`. A hello
 * (`sweep`) also removes the device's expired nonces and challenges in the same statement (never the row of this
 * nonce, which the insert decides on).
 */
export async function useNonce(
  db: Queryable,
  device: { tenantId: string; deviceId: string },
  nonce: string,
  sweep = false,
): Promise<void> {
  const { rowCount } = await db.query(
    `WITH swept AS (
       DELETE FROM request_nonces
        WHERE $5 AND tenant_id = $1 AND device_id = $2 AND expires_at < now() AND nonce <> $3)
     INSERT INTO request_nonces (tenant_id, device_id, nonce, expires_at)
     VALUES ($1, $2, $3, now() + make_interval(secs => $4 / 1000.0))
     ON CONFLICT (tenant_id, device_id, nonce) DO UPDATE SET expires_at = EXCLUDED.expires_at
       WHERE request_nonces.expires_at < now()`,
    [device.tenantId, device.deviceId, nonce, 2 * REQUEST_WINDOW_MS, sweep],
  );
  if (rowCount !== 1) throw AppError.of('requestReplayed', 'this signed request was seen before: a replay');
}

async function newChallenge(db: Queryable, device: { tenantId: string; deviceId: string }): Promise<string | null> {
  const challenge = newNonce();
  const { rowCount } = await db.query(
    `INSERT INTO request_nonces (tenant_id, device_id, nonce, expires_at)
     SELECT $1, $2, '!' || $3, now() + make_interval(secs => $4 / 1000.0)
      WHERE (SELECT count(*) FROM request_nonces
              WHERE tenant_id = $1 AND device_id = $2 AND nonce LIKE '!%' AND expires_at > now()) < $5`,
    [device.tenantId, device.deviceId, challenge, REQUEST_WINDOW_MS, MAX_CHALLENGES],
  );
  return rowCount === 1 ? challenge : null;
}

async function spendChallenge(
  db: Queryable,
  device: { tenantId: string; deviceId: string },
  challenge: string,
): Promise<boolean> {
  const { rowCount } = await db.query(
    `DELETE FROM request_nonces WHERE tenant_id = $1 AND device_id = $2 AND nonce = '!' || $3 AND expires_at > now()`,
    [device.tenantId, device.deviceId, challenge],
  );
  return rowCount === 1;
}
