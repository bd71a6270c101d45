import { closeSync, openSync, readSync } from 'node:fs';
import { endianness } from 'node:os';
import type { Db } from './open.js';

/**
 * PASSIVE passes, at most `maxPasses`, until one finds the WAL as the one before left it, copied back whole;
 * returns the WAL's frames and whether it got there. The WAL restarts from its start only when a transaction
 * begins with every frame copied back, and under a steady stream of commits one pass a second never left such a
 * moment (frames arrive while it copies): the WAL grew by every commit, 1 GB in 15 s at 500 orders/s. Each further
 * pass copies only what arrived during the one before, so they shrink fast. When commits keep coming even so
 * (1,000 orders/s and more), the checkpointer asks the serving thread for a quiet moment and passes once more
 * (src/db/checkpointer.ts). A reader on an old snapshot holds the passes back until the next time: a pass that
 * finds no new frame and still cannot copy them all ends the passes with `readerBehind` (a quiet moment of the
 * writers would not help it).
 * Throws what SQLite throws (SQLITE_FULL on a full card, an I/O error).
 */
export function checkpointCatchingUp(db: Db, maxPasses: number): { walFrames: number; caughtUp: boolean; readerBehind: boolean } {
  let frames = -1;
  for (let pass = 0; pass < maxPasses; pass++) {
    const { log, checkpointed } = (db.pragma('wal_checkpoint(PASSIVE)') as { log: number; checkpointed: number }[])[0]!;
    const unchanged = log === frames;
    frames = log;
    if (unchanged) return { walFrames: frames, caughtUp: checkpointed >= log, readerBehind: checkpointed < log };
  }
  return { walFrames: frames, caughtUp: false, readerBehind: false };
}

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
 * "Durability and speed"). After a crash SQLite reads at most about this much WAL back at the next start.
 */
export const CHECKPOINT_WAL_BYTES = 32 * 1024 * 1024;

/**
 * Whether a checkpoint is worth its cost now. Each time one catches up, the next commit restarts the WAL, and at
 * `synchronous=NORMAL` SQLite fsyncs the WAL's new header inside that commit, on the event loop; and every
 * checkpoint copies the pages that each commit rewrites (the index pages) into the database file once more. So
 * the checkpointer waits until the frames not yet copied back hold `walBytes`, or until nothing was committed
 * since the last look (a box going idle ends with its WAL copied back). Without an index to read it always
 * checkpoints.
 */
export function checkpointDue(now: WalIndex | undefined, before: WalIndex | undefined, walBytes: number): boolean {
  if (!now) return true;
  const pending = now.frames - now.backfilled;
  if (pending <= 0) return false;
  if (pending * now.pageSize >= walBytes) return true;
  return before !== undefined && before.change === now.change && before.frames === now.frames;
}

/**
 * The checkpointer's view of one database's WAL between its ticks: `due()` reads the WAL index and applies
 * `checkpointDue` against what the last look saw. The `-shm` file is opened at the first look that finds it.
 */
export function walCheckpointSchedule(dbFile: string, walBytes: number): { due(): boolean; close(): void } {
  let fd: number | undefined;
  let before: WalIndex | undefined;
  return {
    due() {
      try {
        fd ??= openSync(`${dbFile}-shm`, 'r');
      } catch {
        return true;
      }
      const now = readWalIndex(fd);
      const due = checkpointDue(now, before, walBytes);
      before = now;
      return due;
    },
    close() {
      if (fd !== undefined) closeSync(fd);
      fd = undefined;
    },
  };
}
