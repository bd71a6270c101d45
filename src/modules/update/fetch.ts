import { existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from '../../log.js';
import { freeBytesOf } from '../../shared/files.js';
import { type ReleaseManifest, ReleaseRefused, type ReleaseTarget } from '../../shared/release.js';
import { CentralError } from '../sync/client.js';
import type { Device } from '../sync/enrolment/device.js';
import { type Obtained, obtainRelease } from './download.js';
import { downloadsDir } from './layout.js';

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
export async function fetchRelease(
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
