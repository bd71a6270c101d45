import { mkdirSync } from 'node:fs';
import { mkdtemp, open, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from '../../../log.js';
import { compareVersions } from '../../../shared/release.js';
import { makePatch, PatchToolMissing } from '../../../shared/release-patch.js';
import { inTransaction, type Pool } from '../../db/pool.js';
import { binaryBlob, CHUNK_BYTES, createReleaseRepo, patchBlob, type ReleaseRow } from './repo.js';

/** Patches are made from this many of the newest older releases of the same arch. */
export const PATCH_SOURCES = 3;

export type PatchOutcome =
  | { from: string; size: number; kept: true }
  | { from: string; size: number; kept: false }
  | { skipped: 'zstd' };

/**
 * zstd patches to a release that became ready, from up to PATCH_SOURCES of the newest older ready releases of its
 * arch; a patch is kept only when smaller than half the binary. One release at a time, in the background (the
 * upload's answer does not wait); the binaries go through temporary files under `workDir`, a chunk at a time.
 * A release whose patches were made is marked (`patched_at`), so those the central stopped before are made at
 * its next start.
 */
export function createPatchMaker(pool: Pool, o: { log: Logger; workDir: string }) {
  const repo = createReleaseRepo(pool);
  let queue: Promise<unknown> = Promise.resolve();
  let toolMissingLogged = false;

  async function writeBlob(tenantId: string, blob: string, size: number, file: string): Promise<void> {
    const out = await open(file, 'w');
    try {
      for (let idx = 0; idx < Math.ceil(size / CHUNK_BYTES); idx++) {
        const chunk = await repo.chunk(tenantId, blob, idx);
        if (!chunk) throw new Error(`blob ${blob} lacks chunk ${idx}`);
        await out.write(chunk);
      }
    } finally {
      await out.close();
    }
  }

  /** The patch file into chunks and its row, in one transaction. */
  async function storePatch(target: ReleaseRow, fromSha256: string, file: string, size: number): Promise<void> {
    const input = await open(file, 'r');
    try {
      await inTransaction(pool, async (client) => {
        const tx = createReleaseRepo(client);
        for (let idx = 0; idx * CHUNK_BYTES < size; idx++) {
          const buffer = Buffer.alloc(Math.min(CHUNK_BYTES, size - idx * CHUNK_BYTES));
          const { bytesRead } = await input.read(buffer, 0, buffer.length, idx * CHUNK_BYTES);
          if (bytesRead !== buffer.length) throw new Error(`patch file ${file} is shorter than ${size} bytes`);
          await tx.putChunk(target.tenantId, patchBlob(target.sha256, fromSha256), idx, buffer);
        }
        await tx.insertPatch(target.tenantId, { toSha256: target.sha256, fromSha256, size });
      });
    } finally {
      await input.close();
    }
  }

  async function makeFor(tenantId: string, sha256: string): Promise<PatchOutcome[]> {
    const target = await repo.bySha(tenantId, sha256);
    if (target?.state !== 'ready') return [];
    const sources = (await repo.readyOfArch(tenantId, target.arch))
      .filter((r) => compareVersions(r.version, target.version) < 0)
      .sort((a, b) => compareVersions(b.version, a.version))
      .slice(0, PATCH_SOURCES);
    const outcomes: PatchOutcome[] = [];
    if (sources.length > 0) {
      mkdirSync(o.workDir, { recursive: true, mode: 0o750 });
      const dir = await mkdtemp(join(o.workDir, 'patch-'));
      try {
        const toFile = join(dir, 'to');
        await writeBlob(tenantId, binaryBlob(target.sha256), target.size, toFile);
        for (const source of sources) {
          const fromFile = join(dir, 'from');
          const patchFile = join(dir, 'patch');
          await writeBlob(tenantId, binaryBlob(source.sha256), source.size, fromFile);
          await makePatch(fromFile, toFile, patchFile);
          const { size } = await stat(patchFile);
          const kept = size > 0 && size < target.size / 2;
          if (kept) await storePatch(target, source.sha256, patchFile, size);
          outcomes.push({ from: source.version, size, kept });
          await rm(fromFile, { force: true });
          await rm(patchFile, { force: true });
        }
      } catch (err) {
        if (!(err instanceof PatchToolMissing)) throw err;
        if (!toolMissingLogged) o.log.warn({ err: err.message }, 'release patches are not made: zstd is not installed');
        toolMissingLogged = true;
        return [{ skipped: 'zstd' }];
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    }
    await inTransaction(pool, async (client) => {
      const tx = createReleaseRepo(client);
      await tx.markPatched(tenantId, sha256);
      // Boxes asking for this release now see its patches.
      if (outcomes.some((p) => 'kept' in p && p.kept)) await tx.notify(tenantId);
    });
    return outcomes;
  }

  return {
    /** Makes the patches now (the CLI waits for them before it exits). */
    makeFor,
    /** Makes them in the background, one release after another; a failure is logged, not thrown. */
    schedule(tenantId: string, sha256: string): void {
      queue = queue
        .then(() => makeFor(tenantId, sha256))
        .then(
          (outcomes) => o.log.info({ tenant: tenantId, sha256, outcomes }, 'release patches made'),
          (err: unknown) => o.log.error({ err, tenant: tenantId, sha256 }, 'making release patches failed'),
        );
    },
    /** Schedules the releases whose patches were not made (at start). */
    async resume(): Promise<void> {
      for (const r of await repo.unpatched()) this.schedule(r.tenantId, r.sha256);
    },
    /** Resolves when the patches scheduled so far are made (or failed). */
    idle: (): Promise<void> => queue.then(() => undefined),
  };
}

export type PatchMaker = ReturnType<typeof createPatchMaker>;
