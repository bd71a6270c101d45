import { closeSync, fstatSync, openSync, readSync, statSync } from 'node:fs';
import { endianness } from 'node:os';
import type { Db } from './open.js';
import { WAL_TRIM_MIN_BYTES } from './wal-room.js';

/**
 * PASSIVE passes, at most `maxPasses`, until one finds the WAL as the one before left it, copied back whole;
 * returns the WAL's frames and whether it got there. The WAL restarts from its start only when a transaction
 * begins with every frame copied back, and under a steady stream of commits one pass a second never left such a
 * moment (frames arrive while it copies): the WAL grew by every commit, 1 GB in 15 s at 500 orders/s. Each further
 * pass copies only what arrived during the one before, so they shrink fast. When commits keep coming even so
 * (1,000 orders/s and more), the checkpointer asks the serving thread for a quiet moment and passes once more
 * (src/db/checkpointer.ts). The passes end `blocked` when another connection holds them back, which no quiet
 * moment of the writers would help: a reader on an old snapshot (a pass copied nothing new while frames wait),
 * or another process's checkpoint holding the lock (SQLite then reports -1 frames).
 * Throws what SQLite throws (SQLITE_FULL on a full card, an I/O error).
 */
export function checkpointCatchingUp(
  db: Db,
  maxPasses: number,
): { walFrames: number; caughtUp: boolean; blocked: boolean } {
  let frames = -1;
  let copied = -1;
  for (let pass = 0; pass < maxPasses; pass++) {
    const { log, checkpointed } = (db.pragma('wal_checkpoint(PASSIVE)') as { log: number; checkpointed: number }[])[0]!;
    if (log < 0) return { walFrames: frames, caughtUp: false, blocked: true };
    if (log === frames && checkpointed >= log) return { walFrames: log, caughtUp: true, blocked: false };
    if (checkpointed < log && checkpointed === copied) return { walFrames: log, caughtUp: false, blocked: true };
    frames = log;
    copied = checkpointed;
  }
  return { walFrames: frames, caughtUp: false, blocked: false };
}

/**
 * How large the WAL file may stay when it restarts (`journal_size_limit` of every connection that writes): past
 * that, the first commit after the restart trims it with an ftruncate. Not less: on a file system mounted with
 * `discard` freeing the blocks waits for the device (100-550 ms measured when a 64 MiB limit was passed every
 * few seconds at 1,000 orders/s).
 */
export const WAL_SIZE_LIMIT_BYTES = 256 * 1024 * 1024;

/**
 * Restarts the WAL from this connection, once a checkpoint copied it back whole: the first commit after a
 * checkpoint that caught up rewrites the WAL's header, fsyncs it (SQLite's guard against out-of-order writes
 * after a restart) and trims the file to WAL_SIZE_LIMIT_BYTES, and that fsync waits for every WAL page still
 * being written back. The checkpointer's thread commits first, so the event loop's next commit only appends
 * (docs/architecture.md "Durability and speed"). The commit writes `user_version` back unchanged, which changes
 * page 1 and nothing else. False when another connection holds the write lock (busy_timeout 0: it never waits):
 * that connection's commit restarts the WAL instead, as it would have anyway.
 */
export function restartWal(db: Db): boolean {
  try {
    db.transaction(() => {
      const version = db.pragma('user_version', { simple: true }) as number;
      db.pragma(`user_version = ${version}`);
    }).immediate();
    return true;
  } catch (err) {
    // SQLITE_BUSY, or an extended code of it (BUSY_SNAPSHOT: another connection committed since this one read).
    if (String((err as { code?: string })?.code).startsWith('SQLITE_BUSY')) return false;
    throw err;
  }
}

/**
 * The quiet moment's state (src/db/checkpointer.ts), in memory the serving thread and the checkpointer's thread
 * share (an Int32Array of one element). The serving thread grants it and holds the command queue; when its time is
 * up it takes the grant back unless the worker has begun restarting the WAL, and then holds on until the worker's
 * report. The worker restarts only with the grant in hand. So the queue never begins a transaction while the
 * worker holds the write lock, where SQLite's busy handler would put the event loop to sleep.
 */
export const QUIET_NONE = 0;
export const QUIET_GRANTED = 1;
export const QUIET_RESTARTING = 2;

/** The worker's side: true if the grant was still in force, which it now holds until its report. */
export const claimRestart = (state: Int32Array): boolean =>
  Atomics.compareExchange(state, 0, QUIET_GRANTED, QUIET_RESTARTING) === QUIET_GRANTED;

/** The serving thread's side, when the time is up: true if the grant was taken back before the worker used it. */
export const withdrawQuiet = (state: Int32Array): boolean =>
  Atomics.compareExchange(state, 0, QUIET_GRANTED, QUIET_NONE) === QUIET_GRANTED;

/** What the WAL index (the `-shm` file) says of the WAL: its frames, how many of them are copied back, page size. */
export interface WalIndex {
  /** Frames since the WAL last restarted (mxFrame). */
  frames: number;
  /** Of those, how many a checkpoint has copied into the database file (nBackfill). */
  backfilled: number;
  pageSize: number;
  /** Bumped by every commit (iChange): an unchanged value means nothing was committed in between. */
  change: number;
}

/**
 * Reads the header of SQLite's WAL index from its `-shm` file (https://sqlite.org/walformat.html: two copies of a
 * 48-byte header in native byte order, the checkpoint's state after them). The writer updates it in place; a torn
 * read only makes a wrong guess about when to checkpoint. Undefined when it cannot be read.
 */
export function readWalIndex(fd: number): WalIndex | undefined {
  const buf = Buffer.alloc(100);
  try {
    if (readSync(fd, buf, 0, 100, 0) < 100) return undefined;
  } catch {
    return undefined;
  }
  const le = endianness() === 'LE';
  const u32 = (at: number): number => (le ? buf.readUInt32LE(at) : buf.readUInt32BE(at));
  const u16 = le ? buf.readUInt16LE(14) : buf.readUInt16BE(14);
  return { change: u32(8), frames: u32(16), pageSize: u16 === 1 ? 65536 : u16, backfilled: u32(96) };
}

/**
 * The box's `walBytes`: a restart of the WAL (and its fsync on the event loop) every few seconds at 100 orders/s
 * instead of four a second, and fewer copies of the same pages into the database file (docs/operations.md
 * "Durability and speed"). After a crash SQLite reads the whole WAL back at the next start: a few times this
 * at most at moderate rates.
 */
export const CHECKPOINT_WAL_BYTES = 32 * 1024 * 1024;

/**
 * Whether the WAL holds frames that a checkpoint has yet to copy back, other than the one frame restartWal leaves
 * (see checkpointDue); true when there is no index to read.
 */
export const walWaiting = (now: WalIndex | undefined): boolean =>
  now === undefined || (now.frames - now.backfilled > 0 && now.frames > 1);

/**
 * Whether a checkpoint is worth its cost now. Each time one catches up, the next commit restarts the WAL, and
 * SQLite fsyncs the WAL's new header inside that commit (restartWal: the checkpointer's own); and every
 * checkpoint copies the pages that each commit rewrites (the index pages) into the database file once more. So
 * the checkpointer waits until the frames not yet copied back hold `walBytes`, or until nothing was committed
 * since the last look (a box going idle ends with its WAL copied back). A WAL of one frame is left as it is: the
 * one restartWal wrote (copied back, the event loop's next commit would restart the WAL again, fsync and all).
 * Without an index to read it always checkpoints.
 */
export function checkpointDue(now: WalIndex | undefined, before: WalIndex | undefined, walBytes: number): boolean {
  if (!now) return true;
  if (!walWaiting(now)) return false;
  if ((now.frames - now.backfilled) * now.pageSize >= walBytes) return true;
  return before !== undefined && before.change === now.change && before.frames === now.frames;
}

/** The WAL's share of the data disk now (src/db/wal-room.ts): what it may take, and what its file takes. */
export interface WalRoom {
  allowance: number;
  walFileBytes: number;
}

/**
 * Whether the WAL file holds more of the disk than its allowance while its frames are all copied back: only a
 * checkpoint and a restart trim it (to the allowance, by `journal_size_limit`), and with nothing more to copy back
 * no other rule would ask for one (docs/operations.md "The WAL on a small disk"). Not for a file under
 * WAL_TRIM_MIN_BYTES, which a restart would leave as it is.
 */
export const trimDue = (now: WalIndex | undefined, disk: WalRoom | undefined): boolean =>
  disk !== undefined &&
  now !== undefined &&
  now.frames > 0 &&
  disk.walFileBytes > Math.max(disk.allowance, WAL_TRIM_MIN_BYTES);

/**
 * The checkpointer's view of one database's WAL between its ticks: `due()` reads the WAL index and applies
 * `checkpointDue` against what the last look saw.
 *
 * The `-shm` file stays open for as long as it is the database's: closing any descriptor of a file drops every
 * POSIX lock the process holds on it (fcntl locks belong to the process, not to the descriptor), SQLite's own
 * connections' included, and another process (`venue-box backup now`) would then take the WAL index for unused
 * and rebuild it under the box. So there is no close: the descriptor is closed only once the path names another
 * file (SQLite removes the `-shm` when the last connection closes, and the next open makes a new one), which no
 * connection of this process uses any more. Nor may it be read with readFileSync, which opens and closes. A
 * descriptor opened on a worker thread outlives the worker (descriptors are the process's): the box keeps its
 * schedule on the serving thread, where it outlives the checkpointer's thread (src/db/checkpointer.ts).
 */
export function walCheckpointSchedule(
  dbFile: string,
  walBytes: number,
  room?: () => WalRoom,
): { due(): boolean; waiting(): boolean; walLimit(): number; tight(): boolean } {
  const shmFile = `${dbFile}-shm`;
  let shm: { fd: number; dev: number; ino: number } | undefined;
  let before: WalIndex | undefined;
  let walLimit = WAL_SIZE_LIMIT_BYTES;
  let tight = false;
  /** The WAL index now, or undefined when there is none (yet) or it cannot be read. */
  const look = (): WalIndex | undefined => {
    try {
      const now = statSync(shmFile);
      if (!shm || now.ino !== shm.ino || now.dev !== shm.dev) {
        if (shm) closeSync(shm.fd);
        shm = undefined;
        before = undefined;
        const fd = openSync(shmFile, 'r');
        const opened = fstatSync(fd);
        shm = { fd, dev: opened.dev, ino: opened.ino };
      }
    } catch {
      return undefined;
    }
    return readWalIndex(shm.fd);
  };
  return {
    due() {
      const now = look();
      const disk = room?.();
      walLimit = disk ? Math.min(WAL_SIZE_LIMIT_BYTES, disk.allowance) : WAL_SIZE_LIMIT_BYTES;
      tight = disk !== undefined && disk.allowance < walBytes;
      const due =
        checkpointDue(now, before, disk ? Math.min(walBytes, disk.allowance) : walBytes) || trimDue(now, disk);
      before = now;
      return due;
    },
    /** Whether the WAL held frames to copy back at the last `due()` (walWaiting); true before the first. */
    waiting: () => walWaiting(before),
    /** The `journal_size_limit` for the WAL's next restart, as of the last `due()`: the room's allowance, capped. */
    walLimit: () => walLimit,
    /** Whether, at the last `due()`, the disk's room let the WAL have less than `walBytes`. */
    tight: () => tight,
  };
}
