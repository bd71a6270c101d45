import { Worker } from 'node:worker_threads';

/** Signs bytes with the device key; resolves with the 64-byte Ed25519 signature. */
export type Signer = (message: Uint8Array) => Promise<Uint8Array>;

/** The worker's source, bundled by scripts/build.mjs (absent when the code runs unbundled). */
declare const SIGNER_WORKER_SOURCE: string | undefined;

/**
 * A signer on a worker thread (src/modules/sync/signer-worker.ts), started on first use. The worker is
 * unref'd: it never keeps the process alive, and `close` ends it.
 */
export function createWorkerSigner(secretKey: Uint8Array): Signer & { close(): Promise<void> } {
  let worker: Worker | undefined;
  let nextId = 0;
  const waiting = new Map<number, { resolve(sig: Uint8Array): void; reject(err: unknown): void }>();
  const failAll = (err: unknown) => {
    for (const w of waiting.values()) w.reject(err);
    waiting.clear();
    worker = undefined;
  };
  const start = (): Worker => {
    if (typeof SIGNER_WORKER_SOURCE !== 'string') throw new Error('this build carries no signer worker (run the bundle)');
    const w = new Worker(SIGNER_WORKER_SOURCE, { eval: true });
    w.unref();
    w.on('message', (m: { id: number; signature: Uint8Array }) => {
      waiting.get(m.id)?.resolve(m.signature);
      waiting.delete(m.id);
    });
    w.on('error', failAll);
    w.on('exit', (code) => failAll(new Error(`signer worker exited with ${code}`)));
    return w;
  };
  const sign = (message: Uint8Array): Promise<Uint8Array> =>
    new Promise((resolve, reject) => {
      const id = nextId++;
      waiting.set(id, { resolve, reject });
      try {
        (worker ??= start()).postMessage({ id, message, secretKey });
      } catch (err) {
        waiting.delete(id);
        reject(err);
      }
    });
  return Object.assign(sign, {
    async close() {
      const w = worker;
      worker = undefined;
      if (w) await w.terminate();
    },
  });
}
