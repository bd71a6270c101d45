import { MAX_REQUEST_BYTES } from '../../../shared/sync-protocol.js';
import type { UpdateReport } from '../../../shared/release-schemas.js';
import type { Head, TailEvent, TailResponse } from '../../../shared/sync-messages.js';
import type { Queryable } from '../../db/pool.js';
import type { StoredLease } from './standby-lease.js';

export interface DeviceRow {
  tenantId: string;
  deviceId: string;
  venueId: string;
  publicKey: Buffer;
  keyId: string;
  status: 'active' | 'revoked';
  head: Head;
  /** The header line and signature of the batch that set the head (null at seq 0, or set before migration 2). */
  proof: TailResponse['proof'];
  pendingSeq: number;
  /** The program its last hello named (its update report's version, else the hello's); null before any. */
  programVersion: string | null;
  /** Its architecture as its last update report said; null when it never sent one. */
  arch: string | null;
  /** The catalogue rev it last asked with (docs/sync.md "Down: the catalogue"). */
  catalogueRev: number;
  /** Its clock less the central's at its last hello, null before one: moves its times (box-clock.ts). */
  clockOffsetMs: number | null;
}

export interface DeviceView {
  id: string;
  tenant: string;
  venue: string;
  name: string | null;
  status: 'active' | 'revoked';
  keyId: string;
  head: Head;
  lagEvents: number;
  lastContactAt: string | null;
  clockOffsetMs: number | null;
  deadLetters: number;
  enrolledAt: string;
  /** The program it runs and its update state, from its last hello (docs/sync.md "Releases and rollouts"). */
  version: string | null;
  arch: string | null;
  update: UpdateReport | null;
  updateAt: string | null;
  /** The venue's name (null for a venue the central no longer knows by name). */
  venueName: string | null;
  /** The catalogue rev the box last asked with: what it applied (docs/sync.md "Down: the catalogue"). */
  catalogueRev: number;
  /** When the box first asked with that rev: by then it had applied it. */
  catalogueRevAt: string | null;
  /** When its oldest event not yet acknowledged was written, on the central's clock (hello's oldestPendingMs). */
  oldestPendingAt: string | null;
  /** Heard from within ONLINE_WITHIN_MINUTES. */
  online: boolean;
}

/** A box heard from within this long is online: its heartbeat hello comes every few minutes at most. */
export const ONLINE_WITHIN_MINUTES = 15;

const DEVICE = `tenant_id, device_id, venue_id, public_key, key_id, status, head_epoch, head_seq, head_hash, head_header, head_signature, pending_seq,
  program_version, update_report->>'arch' AS arch, catalogue_rev, clock_offset_ms`;
// biome-ignore lint/suspicious/noExplicitAny: a pg row, whose columns are DEVICE's: typed by the mapping below.
const toDevice = (r: Record<string, any>): DeviceRow => ({
  tenantId: r.tenant_id,
  deviceId: r.device_id,
  venueId: r.venue_id,
  publicKey: r.public_key,
  keyId: r.key_id,
  status: r.status,
  head: { epoch: r.head_epoch, seq: r.head_seq, hash: r.head_hash },
  proof:
    r.head_seq > 0 && r.head_header !== null && r.head_signature !== null
      ? { header: r.head_header, signature: (r.head_signature as Buffer).toString('base64') }
      : null,
  pendingSeq: r.pending_seq,
  programVersion: r.program_version,
  arch: r.arch,
  catalogueRev: r.catalogue_rev,
  clockOffsetMs: r.clock_offset_ms,
});

/** A tail page stops adding events once it holds this many bytes of envelopes (it always holds one). */
export const TAIL_PAGE_BYTES = MAX_REQUEST_BYTES;
const iso = (d: Date | null): string | null => (d ? d.toISOString() : null);

/** SQL of devices, their enrolment codes, heads and tails. */
export function createDeviceRepo(db: Queryable) {
  return {
    /** The code's row; returns when it expires (the database's clock, as the check at enrolment). */
    async insertCode(tenantId: string, codeHash: string, venueId: string, ttlMs: number): Promise<Date> {
      const { rows } = await db.query<{ expires_at: Date }>(
        `INSERT INTO enrol_codes (tenant_id, code_hash, venue_id, expires_at)
         VALUES ($1, $2, $3, now() + $4 * interval '1 millisecond') RETURNING expires_at`,
        [tenantId, codeHash, venueId, ttlMs],
      );
      return rows[0]!.expires_at;
    },
    /** Codes of the tenant that can still enrol a box (unused, not expired). */
    async liveCodes(tenantId: string): Promise<number> {
      const { rows } = await db.query<{ n: number }>(
        'SELECT count(*) AS n FROM enrol_codes WHERE tenant_id = $1 AND used_at IS NULL AND expires_at > now()',
        [tenantId],
      );
      return rows[0]!.n;
    },
    /** The code's row, locked: two enrolments with one code serialise here and only one finds it unused. */
    async codeForUpdate(codeHash: string) {
      const { rows } = await db.query<{ tenant_id: string; venue_id: string; usable: boolean }>(
        `SELECT tenant_id, venue_id, used_at IS NULL AND expires_at > now() AS usable
         FROM enrol_codes WHERE code_hash = $1 FOR UPDATE`,
        [codeHash],
      );
      return rows[0];
    },
    async consumeCode(tenantId: string, codeHash: string, deviceId: string): Promise<void> {
      await db.query('UPDATE enrol_codes SET used_at = now(), device_id = $3 WHERE tenant_id = $1 AND code_hash = $2', [
        tenantId,
        codeHash,
        deviceId,
      ]);
    },
    async insertDevice(d: {
      tenantId: string;
      deviceId: string;
      venueId: string;
      name: string | null;
      publicKey: Buffer;
      keyId: string;
      genesis: string;
    }) {
      await db.query(
        `INSERT INTO devices (tenant_id, device_id, venue_id, name, public_key, key_id, head_hash)
         VALUES ($1, $2, $3, $4, $5, $6, $7)`,
        [d.tenantId, d.deviceId, d.venueId, d.name, d.publicKey, d.keyId, d.genesis],
      );
    },
    /** Whether a device already follows `deviceId` (each device has one successor at most: migration 12). */
    async hasSuccessor(tenantId: string, deviceId: string): Promise<boolean> {
      const { rows } = await db.query('SELECT 1 FROM devices WHERE tenant_id = $1 AND predecessor_id = $2', [
        tenantId,
        deviceId,
      ]);
      return rows.length > 0;
    },
    /**
     * Hands a device's history to the device enrolled after it (docs/sync.md "Enrolling again"), in the enrolment's
     * transaction with the old row locked: the new device starts at the old one's head (same epoch, seq and hash,
     * so the box goes on where it was and nothing is sent twice), the old one is revoked (nothing more lands
     * there), and its orders become the new device's (the one writer of an order is now the new device). The head's
     * proof stays the old device's batch's, so the new head has none.
     */
    async succeed(tenantId: string, previousId: string, deviceId: string): Promise<void> {
      await db.query(
        `UPDATE devices n SET predecessor_id = o.device_id, head_epoch = o.head_epoch, head_seq = o.head_seq,
           head_hash = o.head_hash, pending_seq = o.pending_seq
         FROM devices o
         WHERE n.tenant_id = $1 AND n.device_id = $3 AND o.tenant_id = $1 AND o.device_id = $2`,
        [tenantId, previousId, deviceId],
      );
      await db.query(
        `UPDATE devices SET status = 'revoked', revoked_at = coalesce(revoked_at, now())
         WHERE tenant_id = $1 AND device_id = $2`,
        [tenantId, previousId],
      );
      await db.query('UPDATE orders SET device_id = $3 WHERE tenant_id = $1 AND device_id = $2', [
        tenantId,
        previousId,
        deviceId,
      ]);
    },
    async device(tenantId: string, deviceId: string): Promise<DeviceRow | undefined> {
      const { rows } = await db.query(`SELECT ${DEVICE} FROM devices WHERE tenant_id = $1 AND device_id = $2`, [
        tenantId,
        deviceId,
      ]);
      return rows[0] && toDevice(rows[0]);
    },
    /** The device and its head, locked until the batch's transaction ends: one writer per device. */
    async deviceForUpdate(tenantId: string, deviceId: string): Promise<DeviceRow | undefined> {
      const { rows } = await db.query(
        `SELECT ${DEVICE} FROM devices WHERE tenant_id = $1 AND device_id = $2 FOR UPDATE`,
        [tenantId, deviceId],
      );
      return rows[0] && toDevice(rows[0]);
    },
    /**
     * The device's status and standby lease (null when none was granted yet), its row locked until the transaction
     * ends: two requests for one device's lease decide one after the other (docs/sync.md "The standby lease").
     */
    async standbyLeaseForUpdate(
      tenantId: string,
      deviceId: string,
    ): Promise<{ status: DeviceRow['status']; lease: StoredLease | null } | undefined> {
      const { rows } = await db.query<{
        status: DeviceRow['status'];
        standby_term: number | null;
        standby_holder: string | null;
        standby_until: Date | null;
      }>(
        `SELECT status, standby_term, standby_holder, standby_until FROM devices
         WHERE tenant_id = $1 AND device_id = $2 FOR UPDATE`,
        [tenantId, deviceId],
      );
      const r = rows[0];
      if (!r) return undefined;
      const lease =
        r.standby_term === null || r.standby_holder === null || r.standby_until === null
          ? null
          : { term: r.standby_term, holder: r.standby_holder, untilMs: r.standby_until.getTime() };
      return { status: r.status, lease };
    },
    async setStandbyLease(tenantId: string, deviceId: string, lease: StoredLease): Promise<void> {
      await db.query(
        `UPDATE devices SET standby_term = $3, standby_holder = $4, standby_until = $5
         WHERE tenant_id = $1 AND device_id = $2`,
        [tenantId, deviceId, lease.term, lease.holder, new Date(lease.untilMs)],
      );
    },
    /** The new head with its proof: the header line (text as received) and signature of the batch that set it. */
    async advanceHead(
      tenantId: string,
      deviceId: string,
      head: Head,
      pendingSeq: number,
      proof: { header: string; signature: Buffer },
    ): Promise<void> {
      // A head that reached the box's newest event leaves nothing pending: the oldest pending time goes with it
      // (else it would stay until the next hello, a heartbeat away).
      await db.query(
        `UPDATE devices SET head_epoch = $3, head_seq = $4, head_hash = $5, pending_seq = $6, last_contact_at = now(),
                head_header = $7, head_signature = $8,
                oldest_pending_at = CASE WHEN $4::bigint >= $6::bigint THEN NULL ELSE oldest_pending_at END
         WHERE tenant_id = $1 AND device_id = $2`,
        [tenantId, deviceId, head.epoch, head.seq, head.hash, pendingSeq, proof.header, proof.signature],
      );
    },
    /**
     * Contact without events (a batch that moved no head): the box's backlog, and its clock offset and oldest pending
     * time when given (`undefined` leaves them as they are). A hello writes all of that with recordHello.
     */
    async recordContact(
      tenantId: string,
      deviceId: string,
      pendingSeq: number,
      clockOffsetMs?: number,
      oldestPendingAtMs?: number | null,
    ): Promise<void> {
      await db.query(
        `UPDATE devices SET last_contact_at = now(), pending_seq = greatest(pending_seq, $3),
                clock_offset_ms = coalesce($4, clock_offset_ms),
                oldest_pending_at = CASE WHEN NOT $5 THEN oldest_pending_at
                  WHEN head_seq >= greatest(pending_seq, $3) THEN NULL ELSE to_timestamp($6 / 1000.0) END
         WHERE tenant_id = $1 AND device_id = $2`,
        [
          tenantId,
          deviceId,
          pendingSeq,
          clockOffsetMs ?? null,
          oldestPendingAtMs !== undefined,
          oldestPendingAtMs ?? null,
        ],
      );
    },
    /**
     * A hello, in one statement: contact, clock offset, backlog, when its oldest pending event was made (on the
     * central's clock, null: nothing pending; nothing is pending either when the head covers the box's newest
     * event, its acknowledgement was lost) and its program with its update report (null from a box without one: the
     * last report stays, its arch names the box's releases). Written only while the device is active and registered
     * with `publicKey`, the key its signature was checked with; its head, or undefined when there is no such device.
     */
    async recordHello(
      tenantId: string,
      deviceId: string,
      publicKey: Buffer,
      h: {
        pendingSeq: number;
        clockOffsetMs: number;
        oldestPendingAtMs: number | null;
        version: string;
        report: UpdateReport | null;
      },
    ): Promise<Head | undefined> {
      const { rows } = await db.query<{ head_epoch: number; head_seq: number; head_hash: string }>(
        `UPDATE devices SET last_contact_at = now(), pending_seq = greatest(pending_seq, $4), clock_offset_ms = $5,
                oldest_pending_at = CASE WHEN head_seq >= greatest(pending_seq, $4) THEN NULL
                  ELSE to_timestamp($6 / 1000.0) END,
                program_version = $7, update_report = COALESCE($8, update_report),
                update_at = CASE WHEN $8::jsonb IS NULL THEN update_at ELSE now() END
         WHERE tenant_id = $1 AND device_id = $2 AND status = 'active' AND public_key = $3
         RETURNING head_epoch, head_seq, head_hash`,
        [
          tenantId,
          deviceId,
          publicKey,
          h.pendingSeq,
          h.clockOffsetMs,
          h.oldestPendingAtMs,
          h.version,
          h.report === null ? null : JSON.stringify(h.report),
        ],
      );
      const r = rows[0];
      return r && { epoch: r.head_epoch, seq: r.head_seq, hash: r.head_hash };
    },
    /**
     * Up to `limit` events after `after`, bounded by bytes too: events of up to MAX_EVENT_BYTES each would make a
     * page of hundreds of megabytes, past what one JSON text can hold. Sizes come first (octet_length reads
     * only the stored length, no envelope is fetched), then the envelopes of the events that fit.
     */
    async tail(tenantId: string, deviceId: string, after: number, limit: number): Promise<TailEvent[]> {
      const sizes = await db.query<{ seq: number; bytes: number }>(
        `SELECT seq, octet_length(envelope) AS bytes FROM sync_events
         WHERE tenant_id = $1 AND device_id = $2 AND seq > $3 ORDER BY seq LIMIT $4`,
        [tenantId, deviceId, after, limit],
      );
      let last = after;
      let bytes = 0;
      for (const r of sizes.rows) {
        if (bytes >= TAIL_PAGE_BYTES) break;
        bytes += r.bytes;
        last = r.seq;
      }
      if (last === after) return [];
      const { rows } = await db.query<{ seq: number; epoch: number; chain_hash: string; envelope: string }>(
        `SELECT seq, epoch, chain_hash, envelope FROM sync_events
         WHERE tenant_id = $1 AND device_id = $2 AND seq > $3 AND seq <= $4 ORDER BY seq`,
        [tenantId, deviceId, after, last],
      );
      return rows.map((r) => ({ seq: r.seq, epoch: r.epoch, hash: r.chain_hash, envelope: r.envelope }));
    },
    /** Every device (of one tenant, or all for the CLI; or one of them), with its dead-letter count. */
    async list(tenantId?: string, deviceId?: string): Promise<DeviceView[]> {
      const { rows } = await db.query(
        `SELECT d.*, v.name AS venue_name,
           (SELECT count(*) FROM sync_dead_letters x
            WHERE x.tenant_id = d.tenant_id AND x.device_id = d.device_id AND x.resolved_at IS NULL) AS dead,
           coalesce(d.last_contact_at > now() - $3 * interval '1 minute', false) AS online
         FROM devices d LEFT JOIN venues v ON v.tenant_id = d.tenant_id AND v.venue_id = d.venue_id
         WHERE ($1::text IS NULL OR d.tenant_id = $1) AND ($2::text IS NULL OR d.device_id = $2)
         ORDER BY d.tenant_id, d.enrolled_at, d.device_id`,
        [tenantId ?? null, deviceId ?? null, ONLINE_WITHIN_MINUTES],
      );
      return rows.map((r) => ({
        id: r.device_id,
        tenant: r.tenant_id,
        venue: r.venue_id,
        name: r.name,
        status: r.status,
        keyId: r.key_id,
        head: { epoch: r.head_epoch, seq: r.head_seq, hash: r.head_hash },
        lagEvents: Math.max(0, r.pending_seq - r.head_seq),
        lastContactAt: iso(r.last_contact_at),
        clockOffsetMs: r.clock_offset_ms,
        deadLetters: r.dead,
        enrolledAt: iso(r.enrolled_at)!,
        version: r.program_version,
        arch: r.update_report?.arch ?? null,
        update: r.update_report,
        updateAt: iso(r.update_at),
        venueName: r.venue_name ?? null,
        catalogueRev: r.catalogue_rev,
        catalogueRevAt: iso(r.catalogue_rev_at),
        oldestPendingAt: iso(r.oldest_pending_at),
        online: r.online,
      }));
    },
    /**
     * Device ids are UUIDs made by the central, unique across tenants, so the CLI names only the id; headquarters'
     * API names its tenant too. Revoking a revoked device changes nothing (revoked_at stays the first one's).
     */
    async revoke(deviceId: string, tenantId?: string): Promise<boolean> {
      const r = await db.query(
        `UPDATE devices SET status = 'revoked', revoked_at = coalesce(revoked_at, now())
         WHERE device_id = $1 AND ($2::text IS NULL OR tenant_id = $2)`,
        [deviceId, tenantId ?? null],
      );
      return (r.rowCount ?? 0) > 0;
    },
  };
}

export type DeviceRepo = ReturnType<typeof createDeviceRepo>;
