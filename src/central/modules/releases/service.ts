import { createHash } from 'node:crypto';
import { AppError, invalidField, notFound } from '../../../shared/errors.js';
import { ReleaseRefused, verifyRelease } from '../../../shared/release.js';
import {
  RELEASE_CHECKS,
  type ReleaseManifest,
  type SignedRelease,
  UPDATE_STATES,
  type UpdateState,
} from '../../../shared/release-schemas.js';
import { inTransaction, type Pool } from '../../db/pool.js';
import { type ContentRange, parseRange } from './ranges.js';
import { binaryBlob, CHUNK_BYTES, createReleaseRepo, patchBlob, type ReleaseRepo, type ReleaseRow } from './repo.js';

/** A release as headquarters sees it: its row without the signed file, with the manifest read from it. */
export type ReleaseView = Omit<ReleaseRow, 'tenantId' | 'signed'> & {
  /** `<version>/<arch>`, as the upload's path names it. */
  id: string;
  manifest: ReleaseManifest;
};

export interface ReleaseListEntry extends ReleaseView {
  patches: { from: string; fromVersion: string | null; size: number }[];
  /** Devices running this version on this arch, and devices reporting on it as their target, by state. */
  devices: { running: number; states: Record<UpdateState, number> };
}

export const viewOf = (r: ReleaseRow): ReleaseView => ({
  id: `${r.version}/${r.arch}`,
  version: r.version,
  arch: r.arch,
  sha256: r.sha256,
  size: r.size,
  state: r.state,
  received: r.received,
  uploadedBy: r.uploadedBy,
  uploadedAt: r.uploadedAt,
  readyAt: r.readyAt,
  manifest: JSON.parse(r.signed.manifest) as ReleaseManifest,
});

/**
 * The manifest of a release file that is consistent in itself: its manifest parses as one, and its signature
 * verifies with the publicKey it names. Whether that key is trusted is each box's question, never the central's.
 */
export function selfConsistentManifest(signed: SignedRelease): ReleaseManifest {
  let manifest: unknown;
  try {
    manifest = JSON.parse(signed.manifest);
  } catch {
    throw invalidField('/manifest', 'the manifest is not JSON');
  }
  if (!RELEASE_CHECKS.manifest.Check(manifest)) {
    throw invalidField('/manifest', 'the manifest is not a release manifest of this program (format 1)');
  }
  try {
    verifyRelease(signed, [signed.publicKey]);
  } catch (err) {
    if (!(err instanceof ReleaseRefused)) throw err;
    throw invalidField('/signature', `the release does not verify with its own publicKey: ${err.message}`);
  }
  return manifest;
}

/** sha256 of a stored blob, read one chunk at a time; undefined when a chunk is missing or the size differs. */
async function hashOf(repo: ReleaseRepo, tenantId: string, blob: string, size: number): Promise<string | undefined> {
  const hash = createHash('sha256');
  let bytes = 0;
  const count = Math.ceil(size / CHUNK_BYTES);
  for (let idx = 0; idx < count; idx++) {
    const chunk = await repo.chunk(tenantId, blob, idx);
    if (!chunk) return undefined;
    hash.update(chunk);
    bytes += chunk.length;
  }
  return bytes === size ? hash.digest('hex') : undefined;
}

export interface ReleaseServiceOptions {
  /** A release became ready (after COMMIT): its patches are made in the background. */
  onReady?(tenantId: string, sha256: string): void;
}

/**
 * Headquarters' releases at the central (docs/sync.md "Releases and rollouts"): a signed release file, then its
 * bytes in pieces of at most MAX_REQUEST_BYTES, each written in one transaction with the count received, so an
 * interrupted upload resumes where it stopped. The last byte checks sha256 and size: ready, or all of it gone.
 */
export function createReleaseService(pool: Pool, options: ReleaseServiceOptions = {}) {
  const repo = createReleaseRepo(pool);

  async function get(tenantId: string, version: string, arch: string): Promise<ReleaseView> {
    const row = await repo.release(tenantId, version, arch);
    if (!row) throw notFound(`release ${version}/${arch}`);
    return viewOf(row);
  }

  /** Writes a piece at `range.start` (== received): a partial last chunk is completed, the rest cut in chunks. */
  async function writePiece(tx: ReleaseRepo, row: ReleaseRow, start: number, bytes: Buffer): Promise<void> {
    const first = Math.floor(start / CHUNK_BYTES);
    const offset = start % CHUNK_BYTES;
    const head =
      offset > 0 ? ((await tx.chunk(row.tenantId, binaryBlob(row.sha256), first)) ?? Buffer.alloc(0)) : undefined;
    const data = head ? Buffer.concat([head.subarray(0, offset), bytes]) : bytes;
    for (let i = 0; i * CHUNK_BYTES < data.length; i++) {
      await tx.putChunk(
        row.tenantId,
        binaryBlob(row.sha256),
        first + i,
        data.subarray(i * CHUNK_BYTES, (i + 1) * CHUNK_BYTES),
      );
    }
  }

  return {
    get,

    /**
     * Registers a release file: created (true), or the same bytes again (false; a manifest signed anew, such as the
     * same release signed as a rollback release, replaces the one kept); other bytes under its name: 409.
     */
    async create(
      tenantId: string,
      userId: string,
      signed: SignedRelease,
    ): Promise<{ created: boolean; release: ReleaseView }> {
      const m = selfConsistentManifest(signed);
      const created = await repo.insert(tenantId, {
        version: m.version,
        arch: m.arch,
        signed,
        sha256: m.sha256,
        size: m.size,
        uploadedBy: userId,
      });
      const row = await repo.release(tenantId, m.version, m.arch);
      if (!row) {
        const other = await repo.bySha(tenantId, m.sha256);
        throw AppError.of('conflict', `these bytes are release ${other?.version}/${other?.arch} already`);
      }
      if (row.sha256 !== m.sha256 || row.size !== m.size) {
        throw AppError.of('conflict', `release ${m.version}/${m.arch} exists with other bytes (sha256 ${row.sha256})`);
      }
      if (!created && row.signed.signature !== signed.signature) {
        // Signed anew by the key that signed it (or its successor): a rollback release. Another key's manifest
        // would make every box refuse a release that is being rolled out.
        try {
          // The key kept, or a successor it signed: verifyRelease checks each rotation's own signature.
          verifyRelease(signed, [row.signed.publicKey]);
        } catch {
          throw AppError.of(
            'conflict',
            `release ${m.version}/${m.arch} is signed by another key; sign it with that key`,
          );
        }
        await repo.resign(tenantId, m.version, m.arch, signed);
        await repo.notify(tenantId);
        return { created, release: viewOf({ ...row, signed }) };
      }
      return { created, release: viewOf(row) };
    },

    /**
     * One piece of the binary. A piece that does not start at the bytes received is a 409 naming them (the
     * client resumes from there); a release already ready answers as it is. The last piece makes it ready, or,
     * when the bytes are not the manifest's, removes the release and its bytes (422).
     */
    async append(
      tenantId: string,
      version: string,
      arch: string,
      range: ContentRange,
      bytes: Buffer,
    ): Promise<ReleaseView> {
      const outcome = await inTransaction(pool, async (client) => {
        const tx = createReleaseRepo(client);
        const row = await tx.release(tenantId, version, arch, true);
        if (!row) throw notFound(`release ${version}/${arch}`);
        if (row.state === 'ready') return { row };
        if (range.total !== row.size) {
          throw invalidField('Content-Range', `TOTAL must be the manifest's size, ${row.size} bytes`);
        }
        if (bytes.length !== range.end - range.start + 1) {
          throw invalidField(
            'Content-Range',
            `the range names ${range.end - range.start + 1} bytes; the body has ${bytes.length}`,
          );
        }
        if (range.start !== row.received) {
          throw AppError.of(
            'conflict',
            `the central has ${row.received} bytes of release ${version}/${arch}: send the piece from byte ${row.received}`,
            [String(row.received)],
            { 'Upload-Offset': String(row.received) },
          );
        }
        await writePiece(tx, row, range.start, bytes);
        const received = range.end + 1;
        await tx.setReceived(tenantId, version, arch, received);
        if (received < row.size) return { row: { ...row, received } };
        const sha256 = await hashOf(tx, tenantId, binaryBlob(row.sha256), row.size);
        if (sha256 !== row.sha256) {
          await tx.remove(tenantId, version, arch, row.sha256);
          return { row, mismatch: sha256 ?? 'missing bytes' };
        }
        await tx.markReady(tenantId, version, arch);
        await tx.notify(tenantId);
        return { row: (await tx.release(tenantId, version, arch))!, ready: true };
      });
      if ('mismatch' in outcome) {
        throw AppError.of(
          'releaseMismatch',
          `the bytes have sha256 ${outcome.mismatch}, the manifest says ${outcome.row.sha256}: the upload is discarded; register the release again`,
          ['sha256'],
        );
      }
      if ('ready' in outcome) options.onReady?.(tenantId, outcome.row.sha256);
      return viewOf(outcome.row);
    },

    /** Releases with their patches and the devices on each (every tenant's for the CLI). */
    async list(tenantId?: string): Promise<(ReleaseListEntry & { tenant: string })[]> {
      const rows = await repo.list(tenantId);
      const out: (ReleaseListEntry & { tenant: string })[] = [];
      const tenants = [...new Set(rows.map((r) => r.tenantId))];
      for (const t of tenants) {
        const mine = rows.filter((r) => r.tenantId === t);
        const patches = await repo.patches(t);
        const devices = await repo.devicePrograms(t);
        for (const r of mine) {
          const states = Object.fromEntries(UPDATE_STATES.map((s) => [s, 0])) as Record<UpdateState, number>;
          let running = 0;
          for (const d of devices) {
            const arch = d.report?.arch;
            if (d.version === r.version && (arch === undefined || arch === r.arch)) running++;
            if (d.report?.target === r.version && arch === r.arch) states[d.report.state]++;
          }
          out.push({
            tenant: t,
            ...viewOf(r),
            patches: patches
              .filter((p) => p.toSha256 === r.sha256)
              .map((p) => ({
                from: p.fromSha256,
                fromVersion: mine.find((x) => x.sha256 === p.fromSha256)?.version ?? null,
                size: p.size,
              })),
            devices: { running, states },
          });
        }
      }
      return out;
    },

    /**
     * Bytes of a ready binary (or of a patch to it, `from`) of the tenant for a box: the chunks covering one
     * `Range: bytes=A-B` of at most 8 MiB. Unknown: 404; no Range or a bigger one: 416 naming the rule.
     */
    async download(
      tenantId: string,
      sha256: string,
      from: string | undefined,
      rangeHeader: string | undefined,
    ): Promise<{ bytes: Buffer; start: number; end: number; size: number }> {
      const release = await repo.bySha(tenantId, sha256);
      if (release?.state !== 'ready') throw notFound('release');
      const patch = from === undefined ? undefined : await repo.patch(tenantId, sha256, from);
      if (from !== undefined && !patch) throw notFound('patch');
      const size = patch ? patch.size : release.size;
      const blob = patch ? patchBlob(sha256, patch.fromSha256) : binaryBlob(sha256);
      const range = parseRange(rangeHeader, size);
      if ('refused' in range) {
        throw AppError.of('rangeNotSatisfiable', range.refused, [String(size)], { 'Content-Range': `bytes */${size}` });
      }
      const first = Math.floor(range.start / CHUNK_BYTES);
      const chunks = await repo.chunks(tenantId, blob, first, Math.floor(range.end / CHUNK_BYTES));
      const all = Buffer.concat(chunks);
      const offset = range.start - first * CHUNK_BYTES;
      const bytes = all.subarray(offset, offset + range.end - range.start + 1);
      if (bytes.length !== range.end - range.start + 1) throw new Error(`release ${sha256}: chunks missing`);
      return { bytes, start: range.start, end: range.end, size };
    },
  };
}

export type ReleaseService = ReturnType<typeof createReleaseService>;
