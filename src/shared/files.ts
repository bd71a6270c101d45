import { closeSync, fsyncSync, openSync, statfsSync } from 'node:fs';

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
 * Free space of a directory's disk in bytes: `bavail`, what an unprivileged writer may use (root's reserve is not
 * ours to plan on).
 */
export function freeBytesOf(dir: string): number {
  const s = statfsSync(dir);
  return s.bavail * s.bsize;
}
