import Database from 'better-sqlite3';
import { join } from 'node:path';
import { betterSqliteOptions } from '../native/addons.js';
import { ProcessError } from '../shared/errors.js';

/** The data directory's claim, a file SQLite locks: held by `venue-box serve` while it runs, and by `venue-box restore`. */
export const CLAIM_FILE = 'venue-box.lock';

/** Another process holds the data directory: exit 75, worth a retry (docs/operations.md "Exit codes"). */
export class DataDirClaimedError extends ProcessError {
  constructor(message: string) {
    super('tempFail', message);
  }
}

/**
 * Claims the data directory, or throws DataDirClaimedError when another process holds its claim.
 *
 * The lock is SQLite's own: an exclusive lock (POSIX fcntl) on a tiny database, kept by `locking_mode =
 * EXCLUSIVE` until the connection closes. The kernel drops it when the process ends in any way, kill -9
 * and power cut included, so a stale lock file never blocks anything (unlike a pid file, whose pid may
 * have been reused) and no process list is read (the systemd unit's ProtectProc hides it). Held by
 * another user too (restore run as root beside the box running as venue-box).
 */
export function claimDataDir(dataDir: string): { release(): void } {
  const file = join(dataDir, CLAIM_FILE);
  const db = new Database(file, { ...betterSqliteOptions(), timeout: 0 });
  try {
    // No journal file beside the lock; nothing is ever written into it.
    db.pragma('journal_mode = OFF');
    db.pragma('locking_mode = EXCLUSIVE');
    db.exec('BEGIN EXCLUSIVE; COMMIT');
  } catch (err) {
    db.close();
    if ((err as { code?: string }).code === 'SQLITE_BUSY') {
      throw new DataDirClaimedError(`a venue-box is running on data directory ${dataDir} (it holds ${file})`);
    }
    throw err;
  }
  return { release: () => db.close() };
}
