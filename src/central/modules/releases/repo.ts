import type { SignedRelease, UpdateReport } from '../../../shared/release-schemas.js';
import type { Queryable } from '../../db/pool.js';

/** Rows of release_chunks hold this many bytes each (the last of a blob fewer). */
export const CHUNK_BYTES = 1024 * 1024;

/** A blob of release_chunks: a binary is named by its sha256, a patch by both ends. */
export const binaryBlob = (sha256: string): string => sha256;
export const patchBlob = (toSha256: string, fromSha256: string): string => `${toSha256}.${fromSha256}`;

export interface ReleaseRow {
  tenantId: string;
  version: string;
  arch: string;
  signed: SignedRelease;
  sha256: string;
  size: number;
  state: 'uploading' | 'ready';
  /** Bytes stored so far: an interrupted upload resumes from here. */
  received: number;
  uploadedBy: string;
  uploadedAt: string;
  readyAt: string | null;
}

export interface PatchRow {
  toSha256: string;
  fromSha256: string;
  size: number;
}

/** What the release views count of a device: its program and its last update report. */
export interface DeviceProgram {
  deviceId: string;
  venueId: string;
  version: string | null;
  report: UpdateReport | null;
}

const RELEASE = `tenant_id, version, arch, signed, sha256, size, state, received, uploaded_by, uploaded_at, ready_at`;
// biome-ignore lint/suspicious/noExplicitAny: a pg row, whose columns are RELEASE's: typed by the mapping below.
const toRelease = (r: Record<string, any>): ReleaseRow => ({
  tenantId: r.tenant_id,
  version: r.version,
  arch: r.arch,
  signed: r.signed,
  sha256: r.sha256,
  size: r.size,
  state: r.state,
  received: r.received,
  uploadedBy: r.uploaded_by,
  uploadedAt: (r.uploaded_at as Date).toISOString(),
  readyAt: r.ready_at ? (r.ready_at as Date).toISOString() : null,
});

/** SQL of releases, their bytes in chunks, and their patches (migration 6). */
export function createReleaseRepo(db: Queryable) {
  return {
    /** True when the release is new; an existing version/arch is left as it is. */
    async insert(tenantId: string, r: Omit<ReleaseRow, 'tenantId' | 'state' | 'received' | 'uploadedAt' | 'readyAt'>) {
      const { rowCount } = await db.query(
        `INSERT INTO releases (tenant_id, version, arch, signed, sha256, size, uploaded_by)
         VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT DO NOTHING`,
        [tenantId, r.version, r.arch, JSON.stringify(r.signed), r.sha256, r.size, r.uploadedBy],
      );
      return (rowCount ?? 0) > 0;
    },
    /** The same bytes signed anew (a rollback release): its manifest replaces the one kept. */
    async resign(tenantId: string, version: string, arch: string, signed: SignedRelease): Promise<void> {
      await db.query('UPDATE releases SET signed = $4 WHERE tenant_id = $1 AND version = $2 AND arch = $3', [
        tenantId,
        version,
        arch,
        JSON.stringify(signed),
      ]);
    },
    async release(tenantId: string, version: string, arch: string, lock = false): Promise<ReleaseRow | undefined> {
      const { rows } = await db.query(
        `SELECT ${RELEASE} FROM releases WHERE tenant_id = $1 AND version = $2 AND arch = $3${lock ? ' FOR UPDATE' : ''}`,
        [tenantId, version, arch],
      );
      return rows[0] && toRelease(rows[0]);
    },
    async bySha(tenantId: string, sha256: string): Promise<ReleaseRow | undefined> {
      const { rows } = await db.query(`SELECT ${RELEASE} FROM releases WHERE tenant_id = $1 AND sha256 = $2`, [
        tenantId,
        sha256,
      ]);
      return rows[0] && toRelease(rows[0]);
    },
    /** The tenant's releases, or every tenant's (the CLI). */
    async list(tenantId?: string): Promise<ReleaseRow[]> {
      const { rows } = await db.query(
        `SELECT ${RELEASE} FROM releases WHERE $1::text IS NULL OR tenant_id = $1 ORDER BY tenant_id, uploaded_at, arch`,
        [tenantId ?? null],
      );
      return rows.map(toRelease);
    },
    /** The ready releases of one version (one per arch): what a rollout offers. */
    async readyOfVersion(tenantId: string, version: string): Promise<ReleaseRow[]> {
      const { rows } = await db.query(
        `SELECT ${RELEASE} FROM releases WHERE tenant_id = $1 AND version = $2 AND state = 'ready'`,
        [tenantId, version],
      );
      return rows.map(toRelease);
    },
    async readyOfArch(tenantId: string, arch: string): Promise<ReleaseRow[]> {
      const { rows } = await db.query(
        `SELECT ${RELEASE} FROM releases WHERE tenant_id = $1 AND arch = $2 AND state = 'ready'`,
        [tenantId, arch],
      );
      return rows.map(toRelease);
    },
    async setReceived(tenantId: string, version: string, arch: string, received: number): Promise<void> {
      await db.query('UPDATE releases SET received = $4 WHERE tenant_id = $1 AND version = $2 AND arch = $3', [
        tenantId,
        version,
        arch,
        received,
      ]);
    },
    async markReady(tenantId: string, version: string, arch: string): Promise<void> {
      await db.query(
        `UPDATE releases SET state = 'ready', ready_at = now() WHERE tenant_id = $1 AND version = $2 AND arch = $3`,
        [tenantId, version, arch],
      );
    },
    /** The release and its bytes (its patches go with it: ON DELETE CASCADE, their bytes here). */
    async remove(tenantId: string, version: string, arch: string, sha256: string): Promise<void> {
      await db.query(`DELETE FROM release_chunks WHERE tenant_id = $1 AND (blob = $2 OR blob LIKE $2 || '.%')`, [
        tenantId,
        sha256,
      ]);
      await db.query('DELETE FROM releases WHERE tenant_id = $1 AND version = $2 AND arch = $3', [
        tenantId,
        version,
        arch,
      ]);
    },
    /** Releases that became ready and whose patches were not made yet (the central stopped meanwhile). */
    async unpatched(): Promise<{ tenantId: string; sha256: string }[]> {
      const { rows } = await db.query<{ tenant_id: string; sha256: string }>(
        `SELECT tenant_id, sha256 FROM releases WHERE state = 'ready' AND patched_at IS NULL ORDER BY ready_at`,
      );
      return rows.map((r) => ({ tenantId: r.tenant_id, sha256: r.sha256 }));
    },
    async markPatched(tenantId: string, sha256: string): Promise<void> {
      await db.query('UPDATE releases SET patched_at = now() WHERE tenant_id = $1 AND sha256 = $2', [tenantId, sha256]);
    },

    // ------------------------------------------------------------------------------------------ chunks

    async chunk(tenantId: string, blob: string, idx: number): Promise<Buffer | undefined> {
      const { rows } = await db.query<{ data: Buffer }>(
        'SELECT data FROM release_chunks WHERE tenant_id = $1 AND blob = $2 AND idx = $3',
        [tenantId, blob, idx],
      );
      return rows[0]?.data;
    },
    /** Chunks first..last of a blob, in order: at most a few, as one download range covers. */
    async chunks(tenantId: string, blob: string, first: number, last: number): Promise<Buffer[]> {
      const { rows } = await db.query<{ data: Buffer }>(
        `SELECT data FROM release_chunks WHERE tenant_id = $1 AND blob = $2 AND idx BETWEEN $3 AND $4 ORDER BY idx`,
        [tenantId, blob, first, last],
      );
      return rows.map((r) => r.data);
    },
    async putChunk(tenantId: string, blob: string, idx: number, data: Buffer): Promise<void> {
      await db.query(
        `INSERT INTO release_chunks (tenant_id, blob, idx, data) VALUES ($1, $2, $3, $4)
         ON CONFLICT (tenant_id, blob, idx) DO UPDATE SET data = excluded.data`,
        [tenantId, blob, idx, data],
      );
    },

    // ------------------------------------------------------------------------------------------ patches

    async insertPatch(tenantId: string, p: PatchRow): Promise<void> {
      await db.query(
        `INSERT INTO release_patches (tenant_id, to_sha256, from_sha256, size) VALUES ($1, $2, $3, $4)
         ON CONFLICT (tenant_id, to_sha256, from_sha256) DO UPDATE SET size = excluded.size`,
        [tenantId, p.toSha256, p.fromSha256, p.size],
      );
    },
    /** Patches to the given binaries (all of the tenant's when `toSha256` is omitted). */
    async patches(tenantId: string, toSha256?: string[]): Promise<PatchRow[]> {
      const { rows } = await db.query<{ to_sha256: string; from_sha256: string; size: number }>(
        `SELECT to_sha256, from_sha256, size FROM release_patches
         WHERE tenant_id = $1 AND ($2::text[] IS NULL OR to_sha256 = ANY($2)) ORDER BY to_sha256, from_sha256`,
        [tenantId, toSha256 ?? null],
      );
      return rows.map((r) => ({ toSha256: r.to_sha256, fromSha256: r.from_sha256, size: r.size }));
    },
    async patch(tenantId: string, toSha256: string, fromSha256: string): Promise<PatchRow | undefined> {
      return (await this.patches(tenantId, [toSha256])).find((p) => p.fromSha256 === fromSha256);
    },

    // ------------------------------------------------------------------------------------------ devices

    /** The active devices of a tenant with what their last hello said (migration 6's columns). */
    async devicePrograms(tenantId: string): Promise<DeviceProgram[]> {
      const { rows } = await db.query<{
        device_id: string;
        venue_id: string;
        program_version: string | null;
        update_report: UpdateReport | null;
      }>(
        `SELECT device_id, venue_id, program_version, update_report FROM devices
         WHERE tenant_id = $1 AND status = 'active' ORDER BY device_id`,
        [tenantId],
      );
      return rows.map((r) => ({
        deviceId: r.device_id,
        venueId: r.venue_id,
        version: r.program_version,
        report: r.update_report,
      }));
    },
    /** Wakes every long poll of the tenant at COMMIT (docs/sync.md "Down: the catalogue"). */
    async notify(tenantId: string): Promise<void> {
      await db.query(`SELECT pg_notify('catalogue', $1)`, [tenantId]);
    },
  };
}

export type ReleaseRepo = ReturnType<typeof createReleaseRepo>;
