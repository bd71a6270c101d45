import { existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from '../../log.js';
import { freeBytesOf } from '../../shared/files.js';
import { ReleaseRefused } from '../../shared/release.js';
import type { ReleaseManifest, ReleaseTarget } from '../../shared/release-schemas.js';
import { CentralError } from '../sync/client.js';
import type { Device } from '../sync/enrolment/device.js';
import { type Obtained, obtainRelease } from './download.js';
import { downloadsDir, installRelease, linkedVersion, pruneReleases } from './layout.js';
import type { UpdateStatus } from './state.js';

/** A release's bytes that fail to verify this many times are refused (a corrupt copy at the central). */
const MAX_BAD_DOWNLOADS = 3;

export interface FetchDeps {
  dir: string;
  log: Logger;
  device: Device | undefined;
  requestTimeoutMs: number;
  signal: AbortSignal;
  bytesPerSecond: number;
  minFreeBytes: number;
  /** The box's own binary and its sha256 (a patch from it is asked for). */
  own: { binary: string; sha256: string };
  progress(bytes: number, total: number): void;
}

export type Fetched =
  | { ok: true; obtained: Obtained }
  /** Not now: the central or the network failed, the disk is short, or another release is named. */
  | { ok: false; retry: string; reason?: 'disk' }
  /** Bytes that did not verify: counted; refused after MAX_BAD_DOWNLOADS. */
  | { ok: false; bad: ReleaseRefused; refuse: boolean };

/**
 * One attempt at a release's bytes (src/modules/update/download.ts), told apart by what the box does next: keep
 * them, try again later, or count bytes that did not verify. Bytes that do not match the signed manifest are never
 * kept, and are not the release's fault until they come back wrong MAX_BAD_DOWNLOADS times.
 */
async function fetchRelease(
  deps: FetchDeps,
  target: ReleaseTarget,
  manifest: ReleaseManifest,
  badSoFar: number,
): Promise<Fetched> {
  try {
    const obtained = await obtainRelease(
      {
        device: deps.device,
        client: { requestTimeoutMs: deps.requestTimeoutMs, signal: deps.signal },
        dir: deps.dir,
        log: deps.log,
        bytesPerSecond: deps.bytesPerSecond,
        reserve(bytes) {
          const free = freeBytesOf(deps.dir);
          if (free - bytes < deps.minFreeBytes) {
            throw new ReleaseRefused(
              'disk',
              `the disk has ${free} bytes free; the download needs ${bytes} and update.minFreeBytes ${deps.minFreeBytes} stay free`,
            );
          }
        },
        progress: deps.progress,
      },
      target,
      manifest,
      deps.own,
    );
    return { ok: true, obtained };
  } catch (err) {
    if (err instanceof ReleaseRefused && err.reason === 'disk')
      return { ok: false, retry: err.message, reason: 'disk' };
    if (err instanceof ReleaseRefused) return { ok: false, bad: err, refuse: badSoFar + 1 >= MAX_BAD_DOWNLOADS };
    if (err instanceof CentralError) return { ok: false, retry: err.message.slice(0, 300) };
    throw err;
  }
}

/** Removes what DIR/downloads holds for releases other than `keep` (a sha256): superseded or refused downloads. */
export function pruneDownloads(dir: string, keep: string | undefined): void {
  const downloads = downloadsDir(dir);
  if (!existsSync(downloads)) return;
  for (const name of readdirSync(downloads)) {
    if (keep !== undefined && name.startsWith(keep)) continue;
    rmSync(join(downloads, name), { recursive: true, force: true });
  }
}

/** What a download needs of the agent (src/modules/update/agent.ts): its options, its status and its signals. */
export interface DownloadContext {
  dir: string;
  log: Logger;
  now(): number;
  options: { requestTimeoutMs: number; downloadBytesPerSecond: number; minFreeBytes: number; checkSeconds: number };
  /** The running program's version and binary, with its sha256 (computed once). */
  program: { version: string; execPath: string };
  ownSha(): Promise<string>;
  device(): Device | undefined;
  /** The signal of a new download: aborted when the agent stops or a newer release is named. */
  downloadSignal(): AbortSignal;
  /** The download ended because a newer release was named. */
  superseded(): boolean;
  status(): UpdateStatus;
  /** Changes the status: on the disk, and announced when its state changed. */
  set(next: Partial<UpdateStatus>): void;
  /** The download's progress: in memory, and on the disk about once a second. */
  progress(bytes: number, total: number): void;
  /** No download of a release whose bytes did not verify before this (a backoff), by signature. */
  notBefore: Map<string, number>;
}

/**
 * Downloads the release into DIR/releases/<version>: 'done', 'later' (not yet: see the status's detail), or the
 * refusal of a release whose bytes came back wrong MAX_BAD_DOWNLOADS times.
 */
export async function downloadRelease(
  ctx: DownloadContext,
  t: ReleaseTarget,
  manifest: ReleaseManifest,
): Promise<'done' | 'later' | ReleaseRefused> {
  const key = t.release.signature;
  if ((ctx.notBefore.get(key) ?? 0) > ctx.now()) return 'later';
  const status = ctx.status();
  if (status.state !== 'downloading' || status.sha256 !== manifest.sha256) {
    pruneDownloads(ctx.dir, manifest.sha256);
    ctx.set({
      state: 'downloading',
      target: manifest.version,
      sha256: manifest.sha256,
      rollout: t.rollout,
      reason: undefined,
      detail: undefined,
      progress: { bytes: 0, total: manifest.size },
    });
  }
  const bad = ctx.status().failures?.[key] ?? 0;
  const result = await fetchRelease(
    {
      dir: ctx.dir,
      log: ctx.log,
      device: ctx.device(),
      requestTimeoutMs: ctx.options.requestTimeoutMs,
      signal: ctx.downloadSignal(),
      bytesPerSecond: ctx.options.downloadBytesPerSecond,
      minFreeBytes: ctx.options.minFreeBytes,
      own: { binary: ctx.program.execPath, sha256: await ctx.ownSha() },
      progress: ctx.progress,
    },
    t,
    manifest,
    bad,
  );
  if (result.ok) {
    pruneReleases(ctx.dir, [ctx.program.version, linkedVersion(ctx.dir, 'previous')]);
    installRelease(ctx.dir, manifest.version, result.obtained.file, JSON.stringify(t.release), true);
    ctx.set({ state: 'verified', progress: undefined, detail: undefined, reason: undefined });
    const { fetched, patched } = result.obtained;
    ctx.log.info(
      { version: manifest.version, rollout: t.rollout, fetchedBytes: fetched, patched },
      'update downloaded and verified',
    );
    return 'done';
  }
  if ('bad' in result) {
    if (result.refuse) return result.bad;
    // Tried again after a while: a copy damaged on the way is not the release's fault.
    ctx.notBefore.set(key, ctx.now() + ctx.options.checkSeconds * 1000 * 4 ** (bad + 1));
    ctx.set({
      failures: { ...ctx.status().failures, [key]: bad + 1 },
      reason: result.bad.reason,
      detail: result.bad.message,
    });
    ctx.log.warn(
      { version: manifest.version, err: result.bad.message, tries: bad + 1 },
      'the update download did not verify',
    );
    return 'later';
  }
  if (ctx.superseded()) {
    ctx.log.info({ version: manifest.version }, 'update download left: the central names another release');
    return 'later';
  }
  ctx.set({ detail: result.retry, reason: result.reason });
  ctx.log.warn({ err: result.retry }, 'update download failed; retrying');
  return 'later';
}
