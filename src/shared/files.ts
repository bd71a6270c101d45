import { createHash } from 'node:crypto';
import { closeSync, createReadStream, fsyncSync, openSync, renameSync, statfsSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

/**
 * fsync of a file, or of a directory (its new entry: the rename). A few file systems (some FUSE and network
 * ones) refuse fsync on a directory with EINVAL; the rename is then as durable as they make it.
 */
export function fsyncPath(path: string, directory = false): void {
  const fd = openSync(path, directory ? 'r' : 'r+');
  try {
    fsyncSync(fd);
  } catch (err) {
    if (!(directory && (err as NodeJS.ErrnoException).code === 'EINVAL')) throw err;
  } finally {
    closeSync(fd);
  }
}

/**
 * Replaces a small file whole, so that a power cut leaves the old content or the new, never a mix: written to a
 * temporary name, fsynced, renamed over the file, the directory fsynced.
 */
export function writeFileDurably(file: string, data: string | Uint8Array, mode: number): void {
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, data, { mode });
  fsyncPath(tmp);
  renameSync(tmp, file);
  fsyncPath(dirname(file), true);
}

/**
 * Free space of a directory's disk in bytes: `bavail`, what an unprivileged writer may use (root's reserve is not
 * ours to plan on).
 */
export function freeBytesOf(dir: string): number {
  const s = statfsSync(dir);
  return s.bavail * s.bsize;
}

/** A file's sha256 (hex) and size, read as a stream: a 115 MB binary is never held in memory. */
export async function digestOf(file: string): Promise<{ sha256: string; size: number }> {
  const hash = createHash('sha256');
  let size = 0;
  for await (const chunk of createReadStream(file, { highWaterMark: 1024 * 1024 })) {
    hash.update(chunk as Buffer);
    size += (chunk as Buffer).length;
  }
  return { sha256: hash.digest('hex'), size };
}
