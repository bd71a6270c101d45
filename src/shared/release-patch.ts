/**
 * Binary patches between releases with Debian's zstd (`--patch-from`). A stand-in with the agreed signatures,
 * until the release helper's own version of this file replaces it.
 */
import { execFile, spawnSync } from 'node:child_process';
import { statSync } from 'node:fs';

/** zstd is not installed: no patch can be made (or applied). */
export class PatchToolMissing extends Error {
  constructor() {
    super('zstd is not installed (apt-get install zstd)');
  }
}

let available: boolean | undefined;
export function zstdAvailable(): boolean {
  available ??= spawnSync('zstd', ['--version'], { stdio: 'ignore' }).status === 0;
  return available;
}

/** zstd's window must cover the reference file: 2^N bytes, N at least 27 (its default for --long). */
const windowLog = (bytes: number): number => Math.max(27, Math.ceil(Math.log2(Math.max(2, bytes))));

/** Writes to `outFile` a patch that turns `fromFile` into `toFile`. */
export async function makePatch(fromFile: string, toFile: string, outFile: string): Promise<void> {
  if (!zstdAvailable()) throw new PatchToolMissing();
  const log = windowLog(Math.max(statSync(fromFile).size, statSync(toFile).size));
  await new Promise<void>((resolve, reject) => {
    execFile(
      'zstd',
      ['-q', '-f', `--long=${log}`, `--patch-from=${fromFile}`, toFile, '-o', outFile],
      { timeout: 600_000 },
      (err, _stdout, stderr) => (err ? reject(new Error(`zstd failed: ${stderr.trim() || err.message}`)) : resolve()),
    );
  });
}
