import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { constants, zstdDecompressSync } from 'node:zlib';

/** Placeholder until the streaming version lands: applies a `zstd --patch-from` patch. */
export async function applyPatch(
  fromFile: string,
  patchFile: string,
  outFile: string,
  opts: { maxOutputBytes?: number } = {},
): Promise<void> {
  try {
    const out = zstdDecompressSync(readFileSync(patchFile), {
      dictionary: readFileSync(fromFile),
      params: { [constants.ZSTD_d_windowLogMax]: 31 },
      maxOutputLength: opts.maxOutputBytes,
    });
    writeFileSync(outFile, out);
  } catch (err) {
    rmSync(outFile, { force: true });
    throw err;
  }
}
