// Bundles the sync signer's worker (src/modules/sync/signer-worker.ts) to one CommonJS text. The box starts
// it with `new Worker(text, { eval: true })`, which works the same from dist/main.cjs and inside the single
// binary, where there is no file to point a worker at. Both builds define SIGNER_WORKER_SOURCE with it.
import { build } from 'esbuild';

export async function signerWorkerSource(absWorkingDir = process.cwd()) {
  const result = await build({
    absWorkingDir,
    entryPoints: ['src/modules/sync/signer-worker.ts'],
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    write: false,
    logLevel: 'warning',
  });
  return result.outputFiles[0].text;
}
