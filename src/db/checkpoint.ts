import type { Db } from './open.js';

const MAX_PASSES = 16;

/**
 * PASSIVE passes until the WAL is copied back whole with no commit in between; returns the WAL's frames. The WAL
 * restarts from its start only when a transaction begins while every frame is copied back, and under a steady
 * stream of commits one pass a second never left such a moment (frames arrive while it copies): the WAL grew by
 * every commit, 1 GB in 15 s at 500 orders/s, measured. Each further pass copies only what arrived during the one
 * before, so they shrink fast; once a pass finds the WAL as the one before left it, the next transaction restarts
 * it (and journal_size_limit trims the file). A reader on an old snapshot holds the passes back until next time.
 * Throws what SQLite throws (SQLITE_FULL on a full card, an I/O error).
 */
export function checkpointCatchingUp(db: Db): number {
  let frames = -1;
  for (let pass = 0; pass < MAX_PASSES; pass++) {
    const { log, checkpointed } = (db.pragma('wal_checkpoint(PASSIVE)') as { log: number; checkpointed: number }[])[0]!;
    const caughtUp = log === frames && checkpointed >= log;
    frames = log;
    if (caughtUp) break;
  }
  return frames;
}
