import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { basename, join } from 'node:path';
import { fsyncPath } from '../../shared/files.js';
import { readManifest } from '../../shared/release.js';
import type { ReleaseManifest } from '../../shared/release-schemas.js';

/**
 * Releases side by side (docs/operations.md "Updating boxes"):
 *
 *   DIR/releases/<version>/venue-box      the binary (read-only once written)
 *   DIR/releases/<version>/release.json   its signed manifest, when it came as a release
 *   DIR/current  -> releases/<version>    what the systemd unit starts
 *   DIR/previous -> releases/<version>    what ran before; the unit's guard runs it
 *   DIR/downloads/                        partial downloads, resumed after a restart
 *
 * A link is replaced by a new link under a temp name renamed over it (rename is atomic), then the directory is
 * fsynced: after a power cut `current` names the old release or the new one, never neither.
 */
export const BINARY = 'venue-box';
export const MANIFEST = 'release.json';

export const releasesDir = (dir: string) => join(dir, 'releases');
export const releaseDir = (dir: string, version: string) => join(dir, 'releases', version);
export const binaryOf = (dir: string, version: string) => join(dir, 'releases', version, BINARY);
export const downloadsDir = (dir: string) => join(dir, 'downloads');

/** The version a link names, or undefined. */
export function linkedVersion(dir: string, link: 'current' | 'previous'): string | undefined {
  try {
    const target = readlinkSync(join(dir, link));
    return /^releases\/([^/]+)$/.exec(target)?.[1];
  } catch {
    return undefined;
  }
}

/** Points `link` at releases/<version>, atomically and durably. */
export function pointLink(dir: string, link: 'current' | 'previous', version: string): void {
  const tmp = join(dir, `.${link}.${process.pid}.tmp`);
  rmSync(tmp, { force: true });
  symlinkSync(`releases/${version}`, tmp);
  renameSync(tmp, join(dir, link));
  fsyncPath(dir, true);
}

/** True when this process runs DIR's release of `version` (a box flashed as releases: the updates apply). */
export function runsFromLayout(dir: string, execPath: string, version: string): boolean {
  try {
    return realpathSync(execPath) === realpathSync(binaryOf(dir, version));
  } catch {
    return false;
  }
}

/** Versions present in DIR/releases. */
export function installedVersions(dir: string): string[] {
  if (!existsSync(releasesDir(dir))) return [];
  return readdirSync(releasesDir(dir)).filter((n) => !n.startsWith('.') && existsSync(binaryOf(dir, n)));
}

/**
 * Makes releases/<version> from a verified file: copied (or moved) into a temp directory, fsynced, then renamed
 * into place, so a release directory with a binary in it is always whole.
 */
export function installRelease(
  dir: string,
  version: string,
  from: string,
  manifestText: string | undefined,
  move: boolean,
): string {
  mkdirSync(releasesDir(dir), { recursive: true, mode: 0o755 });
  const final = releaseDir(dir, version);
  if (existsSync(join(final, BINARY))) rmSync(final, { recursive: true, force: true });
  const tmp = join(releasesDir(dir), `.${version}.${process.pid}.tmp`);
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp, { mode: 0o755 });
  const bin = join(tmp, BINARY);
  if (move) renameSync(from, bin);
  else copyFileSync(from, bin);
  chmodSync(bin, 0o755);
  fsyncPath(bin);
  if (manifestText !== undefined) {
    writeFileSync(join(tmp, MANIFEST), manifestText, { mode: 0o644 });
    fsyncPath(join(tmp, MANIFEST));
  }
  fsyncPath(tmp, true);
  rmSync(final, { recursive: true, force: true });
  renameSync(tmp, final);
  fsyncPath(releasesDir(dir), true);
  return join(final, BINARY);
}

/**
 * Removes release directories other than `keep` (current, previous, the one waiting to install) and leftovers of
 * an install cut short; returns what went.
 */
export function pruneReleases(dir: string, keep: Iterable<string | undefined>): string[] {
  if (!existsSync(releasesDir(dir))) return [];
  const kept = new Set([...keep].filter((v): v is string => v !== undefined));
  const removed: string[] = [];
  for (const name of readdirSync(releasesDir(dir))) {
    const leftover = name.startsWith('.') && name.endsWith('.tmp');
    if (!leftover && kept.has(name)) continue;
    if (!leftover && name.startsWith('.')) continue;
    rmSync(join(releasesDir(dir), name), { recursive: true, force: true });
    removed.push(basename(name));
  }
  if (removed.length > 0) fsyncPath(releasesDir(dir), true);
  return removed;
}

/** The signed manifest of a release in DIR/releases (absent for one put in place by `update init`). */
export function runningManifest(dir: string, version: string): ReleaseManifest | undefined {
  try {
    const signed = JSON.parse(readFileSync(join(releaseDir(dir, version), MANIFEST), 'utf8')) as { manifest: string };
    return readManifest(signed.manifest);
  } catch {
    return undefined;
  }
}
