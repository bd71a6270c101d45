// Bundles the box's worker thread (the WAL checkpointer, src/db/checkpoint-worker.ts) to one CommonJS text. The
// box starts it with `new Worker(text, { eval: true })`, which works the same from dist/main.cjs and inside the
// single binary, where there is no file to point a worker at. Both builds define CHECKPOINT_WORKER_SOURCE with it
// (workerDefines).
import { build } from 'esbuild';

export async function workerDefines(absWorkingDir = process.cwd()) {
  return {
    CHECKPOINT_WORKER_SOURCE: JSON.stringify(await workerSource(absWorkingDir, 'src/db/checkpoint-worker.ts')),
  };
}

/** One worker entry bundled to a CommonJS text (also used by src/db/checkpointer.test.ts). */
export async function workerSource(absWorkingDir, entry) {
  const result = await build({
    absWorkingDir,
    entryPoints: [entry],
    bundle: true,
    platform: 'node',
    target: 'node24',
    format: 'cjs',
    write: false,
    logLevel: 'warning',
  });
  return result.outputFiles[0].text;
}
