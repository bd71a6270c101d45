/**
 * Binary patches between two releases of the box's program (docs/operations.md "Updating boxes"): the central
 * makes them with Debian's `zstd --patch-from`, a box applies them with Node's own zstd (node:zlib), so a box
 * needs no zstd installed. A patch between two builds of one source tree is about 0.1% of the ~115 MB binary; the
 * box still checks the result's sha256 against the signed manifest.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { open, rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { Transform, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { constants, createZstdDecompress } from 'node:zlib';
import { findOnPath } from './executable-arch.js';
import { fsyncPath } from './files.js';

/** Makes a patch when Debian's `zstd` is on PATH (the central's machine; a box never needs it). */
export const zstdAvailable = (): boolean => findOnPath('zstd') !== undefined;

/** `zstd` is not installed: no patch can be made (the box then downloads the whole binary). */
export class PatchToolMissing extends Error {
  constructor() {
    super('zstd is not installed (apt-get install zstd): binary patches need it');
  }
}

/** A patch that does not apply: corrupt, truncated, made from another base, or its output too large. */
export class PatchError extends Error {}

const MiB = 1024 * 1024;
/** The largest output applyPatch writes unless told: the largest binary a manifest may describe. */
const DEFAULT_MAX_OUTPUT = 1024 * MiB;
/**
 * A patch's window covers the whole output (zstd sets it from the sizes, `--long` included): up to 2^31 for the
 * largest binaries; libzstd refuses windows over 2^27 (128 MiB) unless told, and our binaries are ~115 MB.
 */
const WINDOW_LOG_MAX = 31;

/**
 * Writes to `outFile` a zstd patch that turns `fromFile` into `toFile`. zstd 1.5.4 sets the window and long-range
 * matching from the sizes with --patch-from. Its manual gives the reference file a 128 MiB default limit, which
 * `--memory` raises to cover both files (1.5.4 went past it unasked with 140 MB files; the flag says it outright).
 * Level 3 (zstd's default): ~0.3 s for two 115 MB builds against ~30 s at level 19, for a patch 15% larger
 * (135 KB instead of 118 KB between two versions of one source tree).
 */
export async function makePatch(fromFile: string, toFile: string, outFile: string): Promise<void> {
  const zstd = findOnPath('zstd');
  if (!zstd) throw new PatchToolMissing();
  const [from, to] = await Promise.all([stat(fromFile), stat(toFile)]);
  const memoryMiB = Math.max(128, Math.ceil(Math.max(from.size, to.size) / MiB) + 1);
  const tmp = tempNameFor(outFile);
  try {
    await run(zstd, [
      '-q',
      '-q',
      '-f',
      `--memory=${memoryMiB}MiB`,
      `--patch-from=${fromFile}`,
      '-o',
      tmp,
      '--',
      toFile,
    ]);
    fsyncPath(tmp);
    await rename(tmp, outFile);
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
  fsyncPath(dirname(outFile), true);
}

/**
 * Writes to `outFile` what `patchFile` makes of `fromFile`: streamed to a temp file beside it (the output is never
 * held in memory; the base is, as zstd's dictionary), fsynced, then renamed. A corrupt or truncated patch, one made
 * from another base (zstd's frame checksum, on by default in `zstd`), or an output over `maxOutputBytes` rejects
 * with a PatchError and leaves no file.
 */
export async function applyPatch(
  fromFile: string,
  patchFile: string,
  outFile: string,
  opts: { maxOutputBytes?: number } = {},
): Promise<void> {
  const maxOutputBytes = opts.maxOutputBytes ?? DEFAULT_MAX_OUTPUT;
  const decompress = await decompressorFrom(fromFile);
  const tmp = tempNameFor(outFile);
  let written = 0;
  const bounded = new Transform({
    transform(chunk: Buffer, _encoding, callback: TransformCallback) {
      written += chunk.length;
      if (written > maxOutputBytes) {
        callback(new PatchError(`the patch makes more than ${maxOutputBytes} bytes`));
        return;
      }
      callback(null, chunk);
    },
  });
  try {
    await pipeline(
      createReadStream(patchFile),
      decompress,
      bounded,
      // flush: fsync before close, so the rename below never names a file whose bytes are not on the disk.
      createWriteStream(tmp, { flags: 'wx', flush: true }),
    );
    await rename(tmp, outFile);
  } catch (err) {
    await rm(tmp, { force: true });
    if (err instanceof PatchError) throw err;
    const e = err as NodeJS.ErrnoException;
    // zlib's errors (Z_BUF_ERROR: truncated; ZSTD_error_*: corrupt, or another base) are the patch's fault.
    if (typeof e.code === 'string' && /^(Z_|ZSTD_)/.test(e.code)) {
      throw new PatchError(`${basename(patchFile)} does not apply to ${basename(fromFile)}: ${e.message}`);
    }
    throw err;
  }
  fsyncPath(dirname(outFile), true);
}

/**
 * A zstd decompressor with `fromFile` as its dictionary. libzstd copies the dictionary, so the file's bytes are let
 * go here, before the output's window fills: the peak while applying a patch to a 115 MB binary is then ~300 MB
 * of RSS instead of ~415 MB (the bytes, libzstd's copy, the window).
 */
async function decompressorFrom(fromFile: string): Promise<Transform> {
  const base = await readWhole(fromFile);
  return createZstdDecompress({ dictionary: base, params: { [constants.ZSTD_d_windowLogMax]: WINDOW_LOG_MAX } });
}

/**
 * A file's bytes in one buffer of its size. fs.readFile reads in chunks and then joins them: twice the memory for
 * a moment.
 */
async function readWhole(file: string): Promise<Buffer> {
  const fh = await open(file, 'r');
  try {
    const { size } = await fh.stat();
    const bytes = Buffer.allocUnsafeSlow(size);
    let at = 0;
    while (at < size) {
      const { bytesRead } = await fh.read(bytes, at, size - at, at);
      if (bytesRead === 0) throw new PatchError(`${basename(file)} shrank while it was read`);
      at += bytesRead;
    }
    return bytes;
  } finally {
    await fh.close();
  }
}

/** A name beside `file` that no other writer uses; a crash can leave it, never `file` half-written. */
function tempNameFor(file: string): string {
  return join(dirname(file), `.${basename(file)}.${process.pid}-${randomBytes(4).toString('hex')}.tmp`);
}

/** Runs a command to its end; rejects with its last line of stderr when it fails. */
function run(command: string, args: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (text: string) => {
      stderr = (stderr + text).slice(-4000);
    });
    child.on('error', reject);
    child.on('close', (code, signal) => {
      if (code === 0) return resolve();
      const last = stderr.trim().split('\n').at(-1) ?? '';
      reject(new Error(`${basename(command)} failed (${signal ?? `exit ${code}`})${last ? `: ${last}` : ''}`));
    });
  });
}
