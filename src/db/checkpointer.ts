import { Worker } from 'node:worker_threads';
import { betterSqliteAddonFile } from '../native/addons.js';
import { type Service, serviceOf } from '../shared/runtime.js';
import {
  QUIET_GRANTED,
  QUIET_NONE,
  QUIET_RESTARTING,
  WAL_SIZE_LIMIT_BYTES,
  type WalRoom,
  walCheckpointSchedule,
  withdrawQuiet,
} from './checkpoint.js';
import type { CheckpointMessage, CheckpointRequest, CheckpointWorkerData } from './checkpoint-worker.js';
import { type CheckpointDone, type Db, startCheckpointer } from './open.js';

/** The worker's source, bundled by scripts/build.mjs and scripts/build-sea.mjs (absent when the code runs unbundled). */
declare const CHECKPOINT_WORKER_SOURCE: string | undefined;

export interface CheckpointerOptions {
  intervalMs: number;
  /** How much of the WAL waits to be copied back before a checkpoint (src/db/checkpoint.ts `checkpointDue`). */
  walBytes: number;
  /**
   * The WAL's share of the data disk, measured at every look (src/db/wal-room.ts): a checkpoint is due once the
   * WAL passes it, and each restart trims the WAL file to it (docs/operations.md "The WAL on a small disk").
   * Without it the WAL goes by `walBytes` and WAL_SIZE_LIMIT_BYTES alone.
   */
  walRoom?: () => WalRoom;
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
  /** The worker thread started (a checkpoint was due) or went away: idle, stopped, or dead (then also `onError`). */
  onWorker?(running: boolean): void;
  /** How long the WAL stays copied back before the worker goes (default WORKER_IDLE_MS). */
  workerIdleMs?: number;
  /** How long after a worker died unasked the next one may start (default WORKER_RESPAWN_MS). */
  workerRespawnMs?: number;
  /**
   * Told on the serving thread when a checkpoint under a quiet moment copied the WAL back whole, before the writes
   * go on: with `keepWal` on, the standby's replication restarts the WAL there (src/modules/standby/primary.ts).
   */
  onCaughtUp?(): void;
}

/** What the box's other parts may ask of its checkpointer besides running it. */
export interface CheckpointerControl {
  /**
   * No checkpoint starts until the returned function is called; resolves once the one under way has reported.
   * A standby's snapshot reads the database file meanwhile (src/modules/standby/snapshot.ts).
   */
  pause(): Promise<() => void>;
  /**
   * While on, the worker never restarts the WAL: a standby's replication restarts it itself once every frame is
   * acknowledged (docs/architecture.md "A standby box").
   */
  keepWal(on: boolean): void;
}

/**
 * How long a quiet moment is granted for. A worker that has not begun restarting the WAL by then no longer may
 * (src/db/checkpoint.ts `claimRestart`); one that has is waited for, one commit of its own.
 */
const QUIET_MAX_MS = 100;

/**
 * How often the WAL is looked at while the disk's room lets it have less than `walBytes` (a small or filling
 * disk): a burst of orders writes megabytes a second into the WAL, and what it writes between two looks is what a
 * checkpoint at the floor must find room for (docs/operations.md "The WAL on a small disk"). A look is a read of
 * the WAL index, a statfs and a stat.
 */
const TIGHT_LOOK_MS = 50;

/** A hold this long is worth a warning: ten times the grant, what no restart takes on storage that is well. */
const SLOW_HOLD_MS = 1000;

/**
 * A worker thread is a V8 heap of its own, about 9 MB of the box's memory: it goes once the WAL has stayed copied
 * back this long (a box between services, or closed for the night), and the next commit brings one back, which
 * takes it some 30 ms of CPU on its own thread (docs/performance.md "Idle memory").
 */
const WORKER_IDLE_MS = 60_000;

/** A worker that died unasked (it never should: reported) is replaced after this, not at the next look. */
const WORKER_RESPAWN_MS = 30_000;

/**
 * The WAL checkpointer as one of the box's long-running parts (src/shared/runtime.ts): PASSIVE checkpoints, due
 * once `walBytes` wait to be copied back or the WAL goes idle (looked at every `intervalMs` on this thread, in the
 * WAL index: two system calls), on a worker thread with a connection of its own (src/db/checkpoint-worker.ts), so
 * copying the WAL back and its fsync never stall the event loop (docs/architecture.md "Durability and speed").
 * The worker starts at the first checkpoint due and goes after `workerIdleMs` with nothing to copy back.
 * Unbundled (unit tests on the sources) there is no worker to start, and the checkpoints run on the event loop.
 */
export function createCheckpointer(db: Db, file: string, options: CheckpointerOptions): Service & CheckpointerControl {
  const schedule = walCheckpointSchedule(file, options.walBytes, options.walRoom);
  /** The serving connection's `journal_size_limit`: it restarts the WAL too (a standby's replication, a fallback). */
  let servingLimit = WAL_SIZE_LIMIT_BYTES;
  const limitServing = (limit: number): void => {
    if (limit === servingLimit) return;
    servingLimit = limit;
    db.pragma(`journal_size_limit = ${limit}`);
  };
  const workerIdleMs = options.workerIdleMs ?? WORKER_IDLE_MS;
  const workerRespawnMs = options.workerRespawnMs ?? WORKER_RESPAWN_MS;
  let worker: Worker | undefined;
  let exited: Promise<void> = Promise.resolve();
  /** A checkpoint was asked of the worker and has not been reported. */
  let checkpointing = false;
  /** The worker was asked to go (idle, or the checkpointer stops): no checkpoint is asked of it any more. */
  let leaving = false;
  let stopped = false;
  /** Since when the WAL has had nothing to copy back, while a worker waits (performance.now()). */
  let idleSince: number | undefined;
  /** A worker that died unasked is not replaced before this (performance.now()). */
  let respawnAt = 0;
  let looks: NodeJS.Timeout | undefined;
  let stopInline: (() => void) | undefined;
  const quietGrant = new Int32Array(new SharedArrayBuffer(4));
  const keepWalFlag = new Int32Array(new SharedArrayBuffer(4));
  let pauses = 0;
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
  const spawn = (): Worker => {
    const workerData: CheckpointWorkerData = {
      file,
      addonFile: betterSqliteAddonFile(),
      quietState: quietGrant.buffer as SharedArrayBuffer,
      keepWal: keepWalFlag.buffer as SharedArrayBuffer,
    };
    const w = new Worker(CHECKPOINT_WORKER_SOURCE!, { eval: true, workerData });
    w.unref();
    w.on('message', (m: CheckpointMessage) => {
      if ('quiet' in m) {
        // Not once the worker was asked to go: its 'stop' ends the wait for the answer, and the writes go on.
        if (leaving) return;
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
      checkpointing = false;
      if (m.ok && m.caughtUp && heldAt !== undefined) options.onCaughtUp?.();
      release();
      if (!m.ok) options.onError(new Error(m.error));
      else if (m.restartError)
        (options.onRestartError ?? options.onError)(new Error(`WAL restart failed: ${m.restartError}`));
      options.onCheckpoint?.({ seconds: m.seconds, ok: m.ok, walFrames: m.walFrames });
    });
    // A worker that dies (it never should) is reported; the WAL keeps every commit, and another worker takes
    // over after workerRespawnMs.
    w.on('error', (err) => options.onError(err));
    // A worker gone in the middle of a quiet moment sends no report: the writes go on.
    exited = new Promise((resolve) =>
      w.once('exit', () => {
        if (!leaving) respawnAt = performance.now() + workerRespawnMs;
        worker = undefined;
        checkpointing = false;
        leaving = false;
        idleSince = undefined;
        try {
          release();
          options.onWorker?.(false);
        } finally {
          resolve();
        }
      }),
    );
    return w;
  };
  // Every intervalMs: a checkpoint when one is due and none is under way, by a worker started for it if there is
  // none; the worker asked to go once the WAL has stayed copied back for workerIdleMs.
  const look = (): void => {
    if (checkpointing || leaving || stopped || pauses > 0) return;
    const now = performance.now();
    if (!worker && now < respawnAt) return;
    if (schedule.due()) {
      idleSince = undefined;
      limitServing(schedule.walLimit());
      if (!worker) {
        try {
          worker = spawn();
        } catch (err) {
          // No thread to be had (a box short of memory): the WAL keeps every commit; tried again later.
          respawnAt = now + workerRespawnMs;
          options.onError(err);
          return;
        }
        options.onWorker?.(true);
      }
      const request: CheckpointRequest = { checkpoint: true, walLimit: schedule.walLimit(), tight: schedule.tight() };
      worker.postMessage(request);
      checkpointing = true;
      return;
    }
    if (!worker) return;
    if (schedule.waiting()) {
      idleSince = undefined;
      return;
    }
    idleSince ??= now;
    if (now - idleSince < workerIdleMs) return;
    leaving = true;
    worker.postMessage('stop');
  };
  const control: CheckpointerControl = {
    async pause() {
      pauses++;
      while (checkpointing) await new Promise((r) => setTimeout(r, 5));
      let resumed = false;
      return () => {
        if (!resumed) pauses--;
        resumed = true;
      };
    },
    keepWal: (on) => Atomics.store(keepWalFlag, 0, on ? 1 : 0),
  };
  const service = serviceOf({
    start() {
      if (typeof CHECKPOINT_WORKER_SOURCE !== 'string') {
        stopInline = startCheckpointer(
          db,
          options.intervalMs,
          options.onError,
          options.onCheckpoint,
          options.walBytes,
          () => pauses > 0,
        );
        return;
      }
      // With the disk's room to go by, a tick every TIGHT_LOOK_MS looks only while the room is tight.
      const tick = options.walRoom ? Math.min(options.intervalMs, TIGHT_LOOK_MS) : options.intervalMs;
      let lookedAt = Number.NEGATIVE_INFINITY;
      looks = setInterval(() => {
        const now = performance.now();
        if (!schedule.tight() && now - lookedAt < options.intervalMs - tick / 2) return;
        lookedAt = now;
        look();
      }, tick);
      looks.unref();
    },
    async stop() {
      stopped = true;
      stopInline?.();
      clearInterval(looks);
      if (!worker) return;
      releaseUnlessRestarting();
      leaving = true;
      worker.postMessage('stop');
      await exited;
    },
  });
  return Object.assign(service, control);
}
