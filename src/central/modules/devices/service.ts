import {
  AppError,
  forbidden,
  invalidField,
  notFound,
  ProcessError,
  retryLater,
  unauthorized,
} from '../../../shared/errors.js';
import { newId } from '../../../shared/ids.js';
import { reenrolProofText } from '../../../shared/reenrol-proof.js';
import { createRateLimiter } from '../../../shared/token-bucket.js';
import {
  GENESIS_HASH,
  keyIdOf,
  PROTOCOL,
  type RequestStamp,
  requestSigningText,
  SCHEMA,
  verifyDetached,
} from '../../../shared/sync-protocol.js';
import type {
  EnrolRequest,
  EnrolResponse,
  HelloRequest,
  HelloResponse,
  TailResponse,
} from '../../../shared/sync-messages.js';
import type { HttpRequest } from '../../../http/types.js';
import { inTransaction, type Pool } from '../../db/pool.js';
import { createTenantRepo } from '../tenants/repo.js';
import { codeHashOf, newEnrolCode } from './enrol-code.js';
import { isAcceptableKey } from '../../../shared/public-key.js';
import { RELEASE_CHECKS } from '../../../shared/release-schemas.js';
import { createDeviceRepo, type DeviceRow } from './repo.js';
import { EARLIEST_MS, TRUSTED_SKEW_MS } from './box-clock.js';
import { checkHelloStamp, checkRequestStamp, stampOf, useNonce, withinWindow } from './request-stamp.js';

/**
 * Enrolments with a wrong code per client address: 10, then one a minute (docs/sync.md "The central node"). A code has
 * 80 bits, so guessing is hopeless anyway; the bound keeps a flood from taking the database's connections.
 */
export const ENROL_FAILURES = { burst: 10, refillSeconds: 60 };

/** Devices: enrolment codes, enrolment, signed requests (hello and the tail), listing and revocation. */
/** Unused, unexpired enrolment codes a tenant may hold at once from headquarters' API (docs/sync.md "API"). */
export const MAX_LIVE_CODES = 50;
/** Devices whose keys one central keeps in memory (about 100 bytes each); past it, it starts again from none. */
const MAX_KNOWN_KEYS = 100_000;

export function createDeviceService(
  pool: Pool,
  now: () => number,
  hooks: {
    /** A hello carried an update report (after it was stored): the tenant's rollout may halt or advance. */
    onUpdateReport?(tenantId: string): Promise<void>;
    /** Unstamped requests of protocol-1 boxes are taken, replayable (docs/sync.md "Signed requests": Versions). */
    acceptProtocol1?: boolean;
  } = {},
) {
  const repo = createDeviceRepo(pool);
  const enrolFailures = createRateLimiter(ENROL_FAILURES, now);
  /**
   * The key of each device that signed a request here. A device's key never changes (a new key is a new
   * enrolment, a new device id), so a hello checks its signature with the key it knows and writes in one statement
   * that still requires the device to be active and registered with that key: a revoked device is refused at once.
   * With it, the clock offset of the device's last hello here, which a hello's timestamp is checked against (a
   * device whose offset is not known here is read: docs/sync.md "Signed requests").
   */
  const knownKeys = new Map<string, { publicKey: Buffer; clockOffsetMs: number | null }>();
  const keyOf = (tenant: string, deviceId: string) => `${tenant}\n${deviceId}`;

  /** Whether the request's x-signature is the device's over requestSigningText (path and query exactly as sent). */
  function signedBy(req: HttpRequest, body: string, publicKey: Buffer, stamp: RequestStamp | null): boolean {
    const query = req.rawQuery;
    const tenant = req.headers['x-tenant'] ?? '';
    const deviceId = req.headers['x-device'] ?? '';
    const path = query ? `${req.path}?${query}` : req.path;
    const text = requestSigningText(req.method, path, tenant, deviceId, body, stamp);
    const signature = Buffer.from(req.headers['x-signature'] ?? '', 'base64');
    return verifyDetached(Buffer.from(text, 'utf8'), signature, publicKey);
  }

  /** The device of a signed request and its stamp, the signature checked; neither window nor nonce yet. */
  async function verifySigned(
    req: HttpRequest,
    body: string,
  ): Promise<{ device: DeviceRow; stamp: RequestStamp | null }> {
    const tenant = req.headers['x-tenant'] ?? '';
    const deviceId = req.headers['x-device'] ?? '';
    const device = tenant && deviceId ? await repo.device(tenant, deviceId) : undefined;
    if (device?.status !== 'active') throw unauthorized('unknown or revoked device');
    // A small-order key enrolled before enrolment refused them would verify forgeries: never trusted.
    if (!isAcceptableKey(device.publicKey))
      throw unauthorized('the device key is a small-order point; enrol the device again');
    const stamp = stampOf(req, hooks.acceptProtocol1);
    if (!signedBy(req, body, device.publicKey, stamp)) throw unauthorized('bad request signature');
    if (knownKeys.size >= MAX_KNOWN_KEYS) knownKeys.clear();
    knownKeys.set(keyOf(tenant, deviceId), { publicKey: device.publicKey, clockOffsetMs: device.clockOffsetMs });
    return { device, stamp };
  }

  /**
   * The device of a signed request (headers x-tenant, x-device, x-timestamp, x-nonce, x-signature over
   * requestSigningText), its timestamp within the window and its nonce new: once only (docs/sync.md "Signed requests").
   */
  async function authenticateSigned(req: HttpRequest, body: string): Promise<DeviceRow> {
    const receivedMs = now();
    const { device, stamp } = await verifySigned(req, body);
    if (stamp === null) return device; // protocol 1, taken while --accept-protocol-1 says so
    checkRequestStamp(stamp, receivedMs, device.clockOffsetMs);
    await useNonce(pool, device, stamp.nonce);
    return device;
  }

  /** Registers a box's public key; the code is spent in the same transaction that creates the device. */
  async function enrolWith(body: EnrolRequest): Promise<EnrolResponse> {
    const publicKey = Buffer.from(body.publicKey, 'base64');
    if (publicKey.length !== 32 || publicKey.toString('base64') !== body.publicKey) {
      throw invalidField('/publicKey', 'publicKey must be the 32 bytes of an Ed25519 public key, base64');
    }
    // Checked before the code is looked at: a refused key leaves the code usable for a proper one.
    if (!isAcceptableKey(publicKey)) {
      throw invalidField(
        '/publicKey',
        'publicKey is a small-order or non-canonical Ed25519 point, which no key pair yields',
      );
    }
    const codeHash = codeHashOf(body.code);
    return inTransaction(pool, async (client) => {
      const tx = createDeviceRepo(client);
      const code = await tx.codeForUpdate(codeHash);
      if (!code?.usable) throw unauthorized('unknown, used or expired enrolment code');
      if (body.previous) await checkPrevious(tx, code.tenant_id, code.venue_id, body.previous, body.publicKey);
      const deviceId = newId();
      const keyId = keyIdOf(publicKey);
      await tx.insertDevice({
        tenantId: code.tenant_id,
        deviceId,
        venueId: code.venue_id,
        name: body.name ?? null,
        publicKey,
        keyId,
        genesis: GENESIS_HASH,
      });
      if (body.previous) await tx.succeed(code.tenant_id, body.previous.deviceId, deviceId);
      await tx.consumeCode(code.tenant_id, codeHash, deviceId);
      return { deviceId, tenant: code.tenant_id, venue: code.venue_id, keyId };
    });
  }

  /**
   * Whether a box enrolling again may take over `previous`'s history (docs/sync.md "Enrolling again"): a device of
   * the code's tenant and venue, that no device follows yet, whose key signed the new key. Its row stays locked
   * until the enrolment commits, so no batch of it lands meanwhile. Any refusal rolls the enrolment back: the
   * code stays usable and the box keeps its device file.
   */
  async function checkPrevious(
    tx: ReturnType<typeof createDeviceRepo>,
    tenant: string,
    venue: string,
    previous: NonNullable<EnrolRequest['previous']>,
    newPublicKey: string,
  ): Promise<void> {
    const old = await tx.deviceForUpdate(tenant, previous.deviceId);
    // Another tenant's device reads as unknown: a code never tells what another tenant has.
    if (!old) throw forbidden(`device ${previous.deviceId} is not a device of this code's tenant`);
    if (old.venueId !== venue)
      throw forbidden(`this code is for venue ${venue}; device ${old.deviceId} was enrolled for venue ${old.venueId}`);
    // A small-order key would verify a forged proof (as it would a forged batch).
    const text = Buffer.from(reenrolProofText(tenant, old.deviceId, newPublicKey), 'utf8');
    if (
      !isAcceptableKey(old.publicKey) ||
      !verifyDetached(text, Buffer.from(previous.signature, 'base64'), old.publicKey)
    )
      throw unauthorized(`the proof is not signed by the key of device ${old.deviceId}`);
    if (await tx.hasSuccessor(tenant, old.deviceId))
      throw AppError.of('conflict', `device ${old.deviceId} was enrolled again already; its history went there`);
  }

  return {
    /** A one-time code for a box of `venueId`; only its digest is stored. */
    async createCode(tenantId: string, venueId: string, ttlHours: number): Promise<string> {
      const tenants = createTenantRepo(pool);
      if (!(await tenants.tenantExists(tenantId))) throw new ProcessError('refused', `unknown tenant ${tenantId}`);
      if (!(await tenants.venueExists(tenantId, venueId)))
        throw new ProcessError('refused', `venue ${venueId} is not a venue of tenant ${tenantId}`);
      const code = newEnrolCode();
      await repo.insertCode(tenantId, codeHashOf(code), venueId, ttlHours * 3_600_000);
      return code;
    },

    /**
     * A one-time code from headquarters' API for a live venue of the caller's tenant (a 400 naming `/venueId`
     * otherwise), with when it expires.
     */
    async createHqCode(
      tenantId: string,
      venueId: string,
      ttlHours: number,
    ): Promise<{ code: string; expiresAt: string }> {
      if (!(await createTenantRepo(pool).liveVenueExists(tenantId, venueId)))
        throw invalidField('/venueId', `venue ${venueId} is not a live venue of this tenant`);
      // Each live code can enrol a box: a chain enrols a few at a time, so a pile of them is a mistake or a leak.
      if ((await repo.liveCodes(tenantId)) >= MAX_LIVE_CODES) {
        throw AppError.of(
          'conflict',
          `this tenant has ${MAX_LIVE_CODES} enrolment codes that are unused and not expired; use or let them expire first`,
        );
      }
      const code = newEnrolCode();
      const expires = await repo.insertCode(tenantId, codeHashOf(code), venueId, ttlHours * 3_600_000);
      return { code, expiresAt: expires.toISOString() };
    },

    /** Enrols a box; past ENROL_FAILURES of the client's address, 429 with Retry-After and nothing looked at. */
    async enrol(body: EnrolRequest, address: string): Promise<EnrolResponse> {
      const waitMs = enrolFailures.waitMs(address);
      if (waitMs > 0) {
        const message = 'too many failed enrolments from this address: retry after Retry-After seconds';
        throw retryLater('tooManyRequests', message, waitMs, ['enrol']);
      }
      try {
        return await enrolWith(body);
      } catch (err) {
        // Wrong codes count: each is a transaction. A refused key is answered before the database is asked.
        if (err instanceof AppError && err.status === 401) enrolFailures.take(address);
        throw err;
      }
    },

    /**
     * Two statements for a device whose key and offset this central knows (its nonce, then the hello), three for
     * the others: a box's sender says hello again after every failed step, a batch refused with 429 included
     * (docs/sync.md "Talking to the central"), so a fleet coming back after a restart sends several hellos a box
     * while it waits for an ingest slot.
     */
    async hello(req: HttpRequest, bodyText: string, body: HelloRequest): Promise<HelloResponse> {
      const receivedMs = now();
      const tenant = req.headers['x-tenant'] ?? '';
      const deviceId = req.headers['x-device'] ?? '';
      const newer = body.protocol > PROTOCOL || body.schema > SCHEMA;
      // A newer protocol is refused with 426 only once the device is known to be active: the full check first.
      // An offset not known here is read: a hello before the device's first measures it, so takes any timestamp.
      const known = newer ? undefined : knownKeys.get(keyOf(tenant, deviceId));
      const stamp = known?.clockOffsetMs != null ? stampOf(req, hooks.acceptProtocol1) : undefined;
      const signer =
        known && stamp && signedBy(req, bodyText, known.publicKey, stamp)
          ? { ...known, stamp, cached: true }
          : await verifySigned(req, bodyText).then(({ device, stamp }) => ({ ...device, stamp, cached: false }));
      const { publicKey } = signer;
      if (newer) throw AppError.of('unsupportedProtocol', `this central speaks protocol ${PROTOCOL}, schema ${SCHEMA}`);
      const id = { tenantId: tenant, deviceId };
      // Another process may have taken a hello on a new clock since: its offset, before a stamp is called stale.
      if (signer.stamp) {
        let clockOffsetMs = signer.clockOffsetMs;
        if (signer.cached && !withinWindow(signer.stamp, receivedMs, clockOffsetMs))
          clockOffsetMs = (await repo.device(tenant, deviceId))?.clockOffsetMs ?? clockOffsetMs;
        await checkHelloStamp(pool, { ...id, clockOffsetMs }, signer.stamp, receivedMs);
        await useNonce(pool, id, signer.stamp.nonce, true);
      }
      // Clocks are data: the offset is recorded for people to see, never used to refuse anything.
      const offsetMs = Math.round(body.boxTimeMs - receivedMs);
      // A report this central does not know (a newer box's new state) is left out, never a reason to refuse the hello.
      const report = RELEASE_CHECKS.report.Check(body.update) ? body.update : null;
      const head = await repo.recordHello(tenant, deviceId, publicKey, {
        pendingSeq: body.pendingSeq,
        clockOffsetMs: offsetMs,
        oldestPendingAtMs: centralTime(body.oldestPendingMs, offsetMs, receivedMs),
        version: report?.version ?? body.version,
        report,
      });
      // Revoked (or gone) since its key was read: refused as the full check would have.
      if (!head) throw unauthorized('unknown or revoked device');
      knownKeys.set(keyOf(tenant, deviceId), { publicKey, clockOffsetMs: offsetMs });
      if (report) await hooks.onUpdateReport?.(tenant);
      return {
        head,
        serverTimeMs: now(),
        protocols: hooks.acceptProtocol1 ? [1, PROTOCOL] : [PROTOCOL],
        schema: SCHEMA,
      };
    },

    async tail(req: HttpRequest, after: number, limit: number): Promise<TailResponse> {
      const device = await authenticateSigned(req, '');
      // Head and proof come from one row read, so the proof is always that of the head it is returned with.
      return {
        head: device.head,
        events: await repo.tail(device.tenantId, device.deviceId, after, limit),
        proof: device.proof,
      };
    },

    /** The active device that signed this request (the catalogue's long poll uses it too); a 401 otherwise. */
    authenticate: authenticateSigned,
    list: (tenantId?: string) => repo.list(tenantId),
    revoke: (deviceId: string) => repo.revoke(deviceId),
    /** Headquarters' revocation: the device of its tenant as the list shows it after; a 404 for another's. */
    async revokeOf(tenantId: string, deviceId: string) {
      if (!(await repo.revoke(deviceId, tenantId))) throw notFound('device');
      return (await repo.list(tenantId, deviceId))[0]!;
    },
  };
}

/**
 * A time on the box's clock moved to the central's by the offset measured at the same hello. A result before 2000
 * or after the hello tells nothing useful (an event stamped in 1970 before NTP set the clock that measured this
 * offset: docs/sync.md "Clocks"): null, never a failed hello.
 */
function centralTime(boxMs: number | null | undefined, offsetMs: number, receivedMs: number): number | null {
  if (boxMs === null || boxMs === undefined) return null;
  const ms = Math.round(boxMs - offsetMs);
  return ms >= EARLIEST_MS && ms <= receivedMs + TRUSTED_SKEW_MS ? ms : null;
}

export type DeviceService = ReturnType<typeof createDeviceService>;
