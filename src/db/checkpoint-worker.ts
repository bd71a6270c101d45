/**
 * The WAL checkpointer's thread (src/db/checkpointer.ts): a connection of its own to the box's database that runs
 * PASSIVE checkpoints when the serving thread finds one due and asks, and reports each one. Copying WAL pages
 * back into the database file and its fsync take milliseconds to tens of milliseconds under load: here they never
 * hold the event loop that serves requests and sockets. Bundled into one text by scripts/lib/worker-source.mjs.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';
import { performance } from 'node:perf_hooks';
import Database from 'better-sqlite3';
import { checkpointCatchingUp, claimRestart, restartWal, WAL_SIZE_LIMIT_BYTES } from './checkpoint.js';

export interface CheckpointWorkerData {
  file: string;
  /** better-sqlite3's addon file, loaded here as the main thread loaded it (inside the single binary, extracted). */
  addonFile: string;
  /** The quiet moment's state, shared with the serving thread (QUIET_* in src/db/checkpoint.ts). */
  quietState: SharedArrayBuffer;
  /** Non-zero while a standby's replication restarts the WAL itself (src/db/checkpointer.ts `keepWal`). */
  keepWal: SharedArrayBuffer;
}

/**
 * To the serving thread: each checkpoint's report (it may write again), or a request to hold its writes for a
 * quiet moment, answered with 'quiet'. From it: a CheckpointRequest (one is due: the next comes after this one's
 * report), 'quiet', 'stop'. A checkpoint that worked but whose restart of the WAL failed says so in
 * `restartError` (the next commit of the serving thread restarts it instead).
 */
export type CheckpointMessage =
  | { seconds: number; ok: true; walFrames: number; caughtUp: boolean; restartError?: string }
  | { seconds: number; ok: false; walFrames: -1; error: string }
  | { quiet: true };

/**
 * A checkpoint asked by the serving thread: one is due, and the WAL's next restart trims its file to `walLimit`
 * (`journal_size_limit`: the WAL's share of the disk, src/db/wal-room.ts).
 */
export interface CheckpointRequest {
  checkpoint: true;
  walLimit: number;
  /**
   * The disk's room lets the WAL have less than `walBytes` (src/db/checkpoint.ts `tight`): a checkpoint that cannot
   * catch up asks for a quiet moment every time, not once a second, since a second of commits may be more than the
   * WAL's share of the disk.
   */
  tight: boolean;
}

const { file, addonFile, quietState, keepWal } = workerData as CheckpointWorkerData;
const quietGrant = new Int32Array(quietState);
const keepingWal = new Int32Array(keepWal);
const addon = { exports: {} };
process.dlopen(addon, addonFile);
// better-sqlite3 takes a loaded addon as `nativeBinding` (its typings only know a path).
const db = new Database(file, { nativeBinding: addon.exports as unknown as string, fileMustExist: true });
// Never waits on the serving connection's write lock: PASSIVE copies what it can and comes back next time.
db.pragma('busy_timeout = 0');
// Every checkpoint syncs the WAL before it copies a frame into the database file, and the file after.
db.pragma('synchronous = NORMAL');
db.pragma('wal_autocheckpoint = 0');
// This connection restarts the WAL (restartWal), so it trims the file as the serving one would; each request says
// to what size (the WAL's share of the disk: docs/operations.md "The WAL on a small disk").
let walLimit = WAL_SIZE_LIMIT_BYTES;
db.pragma(`journal_size_limit = ${walLimit}`);

// On a box whose cores are all busy, the event loop comes first: this thread's nice value goes up by 10 (Linux
// takes a thread id for setpriority; /proc/thread-self names this one). Where that fails it runs as it is.
try {
  setPriority(Number(readlinkSync('/proc/thread-self').split('/').pop()), 10);
} catch {
  // not Linux, or not allowed: same priority as the event loop
}

/** Passes before the serving thread is asked for a quiet moment (each one copies what came during the last). */
const PASSES = 4;
/**
 * At most one quiet moment a second for a checkpoint that could not catch up (each holds the commands for the
 * last pass: a few ms at 2,000 orders/s, more on an SD card), which bounds the WAL by about a second of commits.
 * One that caught up asks every time (at most at every look): its last pass has little to copy, and limiting it
 * too put the restart back on the event loop and cost about 10% more CPU per command at 500 orders/s
 * (docs/architecture.md "Durability and speed").
 */
const QUIET_EVERY_MS = 1000;
let lastQuiet = Number.NEGATIVE_INFINITY;
let tight = false;
let stopped = false;
let quiet: (() => void) | undefined;
/** What the serving thread is told of a failure: the error's message, or what was thrown. */
const messageOf = (err: unknown): string => String((err as Error)?.message ?? err);

async function checkpoint(): Promise<void> {
  const start = performance.now();
  let message: CheckpointMessage;
  try {
    const passes = checkpointCatchingUp(db, PASSES);
    let { walFrames, caughtUp } = passes;
    let restartError: string | undefined;
    // A quiet moment for the restart of a WAL copied back whole, and (at most once a second) when commits keep
    // coming: this thread's commit takes the restart's fsync (restartWal), not the event loop's next one, and the
    // serving thread's commands wait for it instead of finding the write lock taken, where SQLite's busy handler
    // would put the event loop to sleep. Not when a reader holds the passes back: no quiet moment helps then.
    const behind = !caughtUp && !passes.blocked && (tight || start - lastQuiet >= QUIET_EVERY_MS);
    if ((caughtUp || behind) && !stopped) {
      if (behind) lastQuiet = start;
      // The serving thread holds its next commits (src/db/checkpointer.ts) until this reports.
      const granted = new Promise<void>((resolve) => {
        quiet = resolve;
      });
      parentPort!.postMessage({ quiet: true } satisfies CheckpointMessage);
      await granted;
      if (!stopped) {
        ({ walFrames, caughtUp } = checkpointCatchingUp(db, 2));
        // Only with the grant still in force: once its time is up the serving thread commits again (claimRestart).
        if (caughtUp && Atomics.load(keepingWal, 0) === 0 && claimRestart(quietGrant)) {
          try {
            restartWal(db);
          } catch (err) {
            restartError = messageOf(err);
          }
        }
      }
    }
    message = { seconds: (performance.now() - start) / 1000, ok: true, walFrames, caughtUp, restartError };
  } catch (err) {
    message = { seconds: (performance.now() - start) / 1000, ok: false, walFrames: -1, error: messageOf(err) };
  }
  if (stopped) return;
  parentPort!.postMessage(message);
}

parentPort!.on('message', (m: unknown) => {
  if (typeof m === 'object' && m !== null && (m as CheckpointRequest).checkpoint === true) {
    const limit = (m as CheckpointRequest).walLimit;
    tight = (m as CheckpointRequest).tight === true;
    if (Number.isSafeInteger(limit) && limit >= 0 && limit !== walLimit) {
      walLimit = limit;
      db.pragma(`journal_size_limit = ${walLimit}`);
    }
    void checkpoint();
    return;
  }
  if (m === 'quiet') {
    quiet?.();
    quiet = undefined;
    return;
  }
  if (m !== 'stop') return;
  stopped = true;
  quiet?.();
  db.close();
  parentPort!.close();
});
