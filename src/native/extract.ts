import { createHash, randomBytes } from 'node:crypto';
import { closeSync, fsyncSync, openSync, readdirSync, renameSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { ProcessError } from '../shared/errors.js';

/** One native addon carried in the single binary, as listed in its `addons.json` asset (scripts/build-sea.mjs). */
export interface AddonEntry {
  /** SEA asset key of the (gzipped) `.node` file. */
  asset: string;
  /** sha256 of the `.node` file itself, hex: the cache file is named by it. */
  sha256: string;
  /** Size of the `.node` file itself. */
  bytes: number;
  gzip: boolean;
}

/** A native addon that cannot be written or loaded here: a fault of the machine or its setup, exit 78 (EX_CONFIG). */
export class AddonExtractError extends ProcessError {
  constructor(message: string) {
    super('config', message);
  }
}

/**
 * Makes sure `<dir>/<name>-<hash>.node` holds the addon and returns its path.
 *
 * Invariant: a file with the final name is always complete. It is written under a unique temporary name,
 * fsynced (an SD card may lose power right after the first start) and renamed into place; two boxes
 * starting at once both rename a complete file. A file already there with the right size is reused
 * without reading the asset at all, which keeps later starts cheap.
 */
export function ensureAddonFile(dir: string, name: string, entry: AddonEntry, readAsset: () => ArrayBuffer): string {
  const base = `${safeName(name)}-${entry.sha256.slice(0, 16)}`;
  const file = join(dir, `${base}.node`);
  if (sizeOf(file) === entry.bytes) return file;

  const raw = new Uint8Array(readAsset());
  const data = entry.gzip ? gunzipSync(raw) : raw;
  const hash = createHash('sha256').update(data).digest('hex');
  if (data.byteLength !== entry.bytes || hash !== entry.sha256) {
    throw new AddonExtractError(
      `native addon ${name} inside the binary is damaged (sha256 ${hash}, expected ${entry.sha256})`,
    );
  }
  const tmp = join(dir, `${base}.${process.pid}-${randomBytes(4).toString('hex')}.tmp`);
  try {
    const fd = openSync(tmp, 'wx', 0o755);
    try {
      writeSync(fd, data);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, file);
  } catch (err) {
    removeQuietly(tmp);
    throw new AddonExtractError(
      `cannot write native addon ${name} to ${dir}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`,
    );
  }
  removeStale(dir, safeName(name), `${base}.node`);
  return file;
}

/** Earlier versions of this addon (a box updated in place) and temp files of crashed extractions. */
function removeStale(dir: string, prefix: string, keep: string): void {
  const hourAgo = Date.now() - 3_600_000;
  // Exactly this addon's names: "better" must never match "better-sqlite3-<hash>.node".
  const ours = new RegExp(`^${prefix.replace(/\./g, '\\.')}-[0-9a-f]{16}\\.(node|\\d+-[0-9a-f]{8}\\.tmp)$`);
  for (const entry of safeReaddir(dir)) {
    const match = ours.exec(entry);
    if (!match || entry === keep) continue;
    const old = match[1] === 'node' || (mtimeOf(join(dir, entry)) ?? Infinity) < hourAgo;
    // Unlinking a file another process has mapped is safe on Linux: its mapping stays valid.
    if (old) removeQuietly(join(dir, entry));
  }
}

function safeName(name: string): string {
  return name.replace(/[^A-Za-z0-9_.-]+/g, '_');
}

function sizeOf(file: string): number | undefined {
  try {
    return statSync(file).size;
  } catch {
    return undefined;
  }
}

function mtimeOf(file: string): number | undefined {
  try {
    return statSync(file).mtimeMs;
  } catch {
    return undefined;
  }
}

function safeReaddir(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

function removeQuietly(file: string): void {
  try {
    unlinkSync(file);
  } catch {
    // already gone
  }
}
