import type { Db } from './open.js';

/**
 * PASSIVE passes, at most `maxPasses`, until one finds the WAL as the one before left it, copied back whole;
 * returns the WAL's frames and whether it got there. The WAL restarts from its start only when a transaction
 * begins with every frame copied back, and under a steady stream of commits one pass a second never left such a
 * moment (frames arrive while it copies): the WAL grew by every commit, 1 GB in 15 s at 500 orders/s. Each further
 * pass copies only what arrived during the one before, so they shrink fast. When commits keep coming even so
 * (1,000 orders/s and more), the checkpointer asks the serving thread for a quiet moment and passes once more
 * (src/db/checkpointer.ts). A reader on an old snapshot holds the passes back until the next time.
 * Throws what SQLite throws (SQLITE_FULL on a full card, an I/O error).
 */
export function checkpointCatchingUp(db: Db, maxPasses: number): { walFrames: number; caughtUp: boolean } {
  let frames = -1;
  for (let pass = 0; pass < maxPasses; pass++) {
    const { log, checkpointed } = (db.pragma('wal_checkpoint(PASSIVE)') as { log: number; checkpointed: number }[])[0]!;
    const caughtUp = log === frames && checkpointed >= log;
    frames = log;
    if (caughtUp) return { walFrames: frames, caughtUp };
  }
  return { walFrames: frames, caughtUp: false };
}
