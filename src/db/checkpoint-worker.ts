/**
 * The WAL checkpointer's thread (src/db/checkpointer.ts): a connection of its own to the box's database that runs
 * a PASSIVE checkpoint every `intervalMs` and reports each one. Copying WAL pages back into the database file
 * and its fsync take milliseconds to tens of milliseconds under load: here they never hold the event loop that
 * serves requests and sockets. Bundled into one text by scripts/lib/worker-source.mjs.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { performance } from 'node:perf_hooks';
import Database from 'better-sqlite3';

export interface CheckpointWorkerData {
  file: string;
  intervalMs: number;
  /** better-sqlite3's addon file, loaded here as the main thread loaded it (inside the single binary, extracted). */
  addonFile: string;
}

export type CheckpointMessage =
  | { seconds: number; ok: true; walFrames: number }
  | { seconds: number; ok: false; walFrames: -1; error: string };

const { file, intervalMs, addonFile } = workerData as CheckpointWorkerData;
const addon = { exports: {} };
process.dlopen(addon, addonFile);
// better-sqlite3 takes a loaded addon as `nativeBinding` (its typings only know a path).
const db = new Database(file, { nativeBinding: addon.exports as unknown as string, fileMustExist: true });
// Never waits on the serving connection's write lock: PASSIVE copies what it can and comes back next time.
db.pragma('busy_timeout = 0');
db.pragma('wal_autocheckpoint = 0');

const timer = setInterval(() => {
  const start = performance.now();
  let message: CheckpointMessage;
  try {
    const result = (db.pragma('wal_checkpoint(PASSIVE)') as { log: number }[])[0]!;
    message = { seconds: (performance.now() - start) / 1000, ok: true, walFrames: result.log };
  } catch (err) {
    message = { seconds: (performance.now() - start) / 1000, ok: false, walFrames: -1, error: String((err as Error)?.message ?? err) };
  }
  parentPort!.postMessage(message);
}, intervalMs);

parentPort!.on('message', (m: unknown) => {
  if (m !== 'stop') return;
  clearInterval(timer);
  db.close();
  parentPort!.close();
});
