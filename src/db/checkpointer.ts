import { Worker } from 'node:worker_threads';
import { betterSqliteAddonFile } from '../native/addons.js';
import type { Service } from '../shared/service.js';
import { QUIET_GRANTED, QUIET_NONE, QUIET_RESTARTING, withdrawQuiet } from './checkpoint.js';
import type { CheckpointMessage, CheckpointWorkerData } from './checkpoint-worker.js';
import { type CheckpointDone, type Db, startCheckpointer } from './open.js';

/** The worker's source, bundled by scripts/build.mjs and scripts/build-sea.mjs (absent when the code runs unbundled). */
declare const CHECKPOINT_WORKER_SOURCE: string | undefined;

export interface CheckpointerOptions {
  intervalMs: number;
  /** How much of the WAL waits to be copied back before a checkpoint (src/db/checkpoint.ts `checkpointDue`). */
  walBytes: number;
  onError(err: unknown): void;
  /** The checkpoint worked but the worker's restart of the WAL failed: the next commit restarts it instead. */
  onRestartError?(err: Error): void;
  onCheckpoint?(done: CheckpointDone): void;
  /**
   * The serving thread's steady writer (the command queue): held for the quiet moment a checkpoint asks for when
   * commits keep coming, so that the WAL can restart, or to restart it on its own thread (src/db/checkpoint.ts
   * `restartWal`); released at its report, or after QUIET_MAX_MS unless the worker is restarting the WAL then.
   */
  writes?: { hold(): void; release(): void };
  /**
   * Each hold of `writes`, once it ends: how long the command queue's confirmations waited for it, and whether it
   * lasted `slowHoldMs` or more (`onSlowHold` was called).
   */
  onHeld?(seconds: number, slow: boolean): void;
  /**
   * A hold still on after `slowHoldMs` (default SLOW_HOLD_MS): the worker's restart of the WAL is waiting for the
   * storage (a card slow to sync). Once per hold; `onHeld` follows when it ends.
   */
  onSlowHold?(heldMs: number): void;
  slowHoldMs?: number;
}

/**
 * How long a quiet moment is granted for. A worker that has not begun restarting the WAL by then no longer may
 * (src/db/checkpoint.ts `claimRestart`); one that has is waited for, one commit of its own.
 */
const QUIET_MAX_MS = 100;

/** A hold this long is worth a warning: ten times the grant, what no restart takes on storage that is well. */
const SLOW_HOLD_MS = 1000;

/**
 * The WAL checkpointer as one of the box's long-running parts (src/shared/service.ts): PASSIVE checkpoints, due
 * once `walBytes` wait to be copied back or the WAL goes idle (looked at every `intervalMs`), on a worker thread
 * with a connection of its own (src/db/checkpoint-worker.ts), so copying the WAL back and its fsync never stall
 * the event loop (docs/operations.md "Durability and speed"). Unbundled (unit tests on the sources) there is no
 * worker to start, and the checkpoints run on the event loop as before.
 */
export function createCheckpointer(db: Db, file: string, options: CheckpointerOptions): Service {
  let worker: Worker | undefined;
  let stopInline: (() => void) | undefined;
  let exited: Promise<void> = Promise.resolve();
  const quietGrant = new Int32Array(new SharedArrayBuffer(4));
  const slowHoldMs = options.slowHoldMs ?? SLOW_HOLD_MS;
  /** When the writes were held (performance.now()); undefined while they are not. */
  let heldAt: number | undefined;
  let quietTimer: NodeJS.Timeout | undefined;
  let slowTimer: NodeJS.Timeout | undefined;
  const release = (): void => {
    clearTimeout(quietTimer);
    quietTimer = undefined;
    Atomics.store(quietGrant, 0, QUIET_NONE);
    if (heldAt === undefined) return;
    const heldMs = performance.now() - heldAt;
    heldAt = undefined;
    clearTimeout(slowTimer);
    slowTimer = undefined;
    options.writes?.release();
    options.onHeld?.(heldMs / 1000, heldMs >= slowHoldMs);
  };
  // The grant's time is up, or the checkpointer stops: the writes go on unless the worker is restarting the WAL
  // (it holds the write lock), and then at its report or its exit. Taken back first, so it can no longer start.
  const releaseUnlessRestarting = (): void => {
    if (withdrawQuiet(quietGrant) || Atomics.load(quietGrant, 0) !== QUIET_RESTARTING) release();
  };
  return {
    start() {
      if (typeof CHECKPOINT_WORKER_SOURCE !== 'string') {
        stopInline = startCheckpointer(db, options.intervalMs, options.onError, options.onCheckpoint, options.walBytes);
        return;
      }
      const workerData: CheckpointWorkerData = {
        file, intervalMs: options.intervalMs, walBytes: options.walBytes, addonFile: betterSqliteAddonFile(),
        quietState: quietGrant.buffer as SharedArrayBuffer,
      };
      const w = new Worker(CHECKPOINT_WORKER_SOURCE, { eval: true, workerData });
      w.unref();
      w.on('message', (m: CheckpointMessage) => {
        if ('quiet' in m) {
          // Answered from the event loop, so no transaction of this thread is open: none starts until released.
          options.writes?.hold();
          const at = performance.now();
          heldAt = at;
          Atomics.store(quietGrant, 0, QUIET_GRANTED);
          quietTimer = setTimeout(releaseUnlessRestarting, QUIET_MAX_MS);
          slowTimer = setTimeout(() => options.onSlowHold?.(performance.now() - at), slowHoldMs);
          w.postMessage('quiet');
          return;
        }
        release();
        if (!m.ok) options.onError(new Error(m.error));
        else if (m.restartError) (options.onRestartError ?? options.onError)(new Error(`WAL restart failed: ${m.restartError}`));
        options.onCheckpoint?.({ seconds: m.seconds, ok: m.ok, walFrames: m.walFrames });
      });
      // A worker that dies (it never should) is reported; the WAL keeps every commit and the next start checkpoints.
      w.on('error', (err) => options.onError(err));
      // A worker gone in the middle of a quiet moment sends no report: the writes go on.
      exited = new Promise((resolve) => w.once('exit', () => {
        release();
        resolve();
      }));
      worker = w;
    },
    async stop() {
      stopInline?.();
      if (!worker) return;
      releaseUnlessRestarting();
      worker.postMessage('stop');
      await exited;
      worker = undefined;
    },
  };
}
