import { execFileSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freeBytesOf } from '../../src/shared/files.js';

const MiB = 1024 * 1024;

/**
 * A small disk of its own for a test file: a tmpfs of `mib` MiB (40 by default), which only root may mount.
 * Elsewhere undefined, after one line saying the file is skipped and why. `testFile` is the caller's
 * `import.meta.url`.
 */
export function mountSmallDisk(testFile: string, prefix: string, mib = 40): string | undefined {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${mib}m`, 'tmpfs', dir], { stdio: 'ignore' });
    return dir;
  } catch {
    rmSync(dir, { recursive: true, force: true });
    const file = relative(process.cwd(), fileURLToPath(testFile));
    console.warn(`${file} skipped: \`mount -t tmpfs\` failed (it needs root)`);
    return undefined;
  }
}

export function unmountSmallDisk(dir: string | undefined): void {
  if (!dir) return;
  execFileSync('umount', [dir]);
  rmSync(dir, { recursive: true, force: true });
}

/** Writes the file `name` in `dir` until at most `leave` bytes are free (or the disk refuses more); its path. */
export function fill(dir: string, name: string, leave: number): string {
  const file = join(dir, name);
  const fd = openSync(file, 'a');
  const chunk = Buffer.alloc(MiB, 1);
  try {
    for (let rest = freeBytesOf(dir) - leave; rest > 0; rest -= chunk.length) {
      writeSync(fd, chunk, 0, Math.min(chunk.length, rest));
    }
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
  } finally {
    closeSync(fd);
  }
  return file;
}
