import {
  chownSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  renameSync,
  statSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { join, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { prepareDataDir } from '../../box/storage.js';
import { DataDirClaimedError, claimDataDir, CLAIM_FILE } from '../../db/data-dir-claim.js';
import { DB_FILE } from '../../db/open.js';
import { betterSqliteOptions } from '../../native/addons.js';
import { fsyncPath } from '../../shared/files.js';
import { BACKUP_TABLE, CARRIED_FILES } from './take.js';
import { type BackupInfo, readBackup } from './verify.js';

export interface RestoreResult {
  backup: BackupInfo;
  dataDir: string;
  /** Where the data it replaced went (undefined: the data directory held none). */
  replacedDir: string | undefined;
  restored: string[];
}

/**
 * `venue-box restore FILE --data-dir DIR` (docs/operations.md "Backups and restore"): checks the backup, takes the data
 * directory's lock (so a running box's data is never replaced, and no box starts meanwhile), prepares every new
 * file under a temp name beside its place, moves what the directory held aside into `replaced-<time>/` (the
 * database with its -wal and -shm: a stale WAL beside another database would be replayed into it), then renames
 * the new files in and fsyncs the directory.
 */
export function restoreBackup(file: string, dataDirArg: string, now: () => number = Date.now): RestoreResult {
  const backup = readBackup(resolve(file));
  const dataDir = resolve(dataDirArg);
  prepareDataDir(dataDir);
  let claim: { release(): void };
  try {
    claim = claimDataDir(dataDir);
  } catch (err) {
    if (!(err instanceof DataDirClaimedError)) throw err;
    throw new DataDirClaimedError(`refusing to restore: ${err.message}; stop it first (systemctl stop venue-box)`);
  }
  const owner = ownerFor(dataDir);
  const temps: string[] = [];
  try {
    const tmpDb = join(dataDir, `.${DB_FILE}.restore.${process.pid}.tmp`);
    temps.push(tmpDb, `${tmpDb}-journal`);
    copyFileSync(backup.file, tmpDb);
    const db = new Database(tmpDb, { ...betterSqliteOptions(), fileMustExist: true });
    try {
      db.exec(`DROP TABLE ${BACKUP_TABLE}`);
    } finally {
      db.close();
    }
    const pending: [string, string][] = [[tmpDb, DB_FILE]];
    for (const [name, data] of backup.files) {
      const tmp = join(dataDir, `.${name}.restore.${process.pid}.tmp`);
      temps.push(tmp);
      writeFileSync(tmp, data, { mode: 0o600 });
      pending.push([tmp, name]);
    }
    for (const [tmp] of pending) {
      fsyncPath(tmp);
      owner?.(tmp);
    }

    const present = [DB_FILE, `${DB_FILE}-wal`, `${DB_FILE}-shm`, ...CARRIED_FILES].filter((n) =>
      existsSync(join(dataDir, n)),
    );
    let replacedDir: string | undefined;
    if (present.length > 0) {
      replacedDir = join(dataDir, `replaced-${new Date(now()).toISOString().replaceAll(':', '').replace('.', '-')}`);
      mkdirSync(replacedDir, { mode: 0o700 });
      owner?.(replacedDir);
      for (const n of present) renameSync(join(dataDir, n), join(replacedDir, n));
      fsyncPath(replacedDir, true);
    }
    for (const [tmp, name] of pending) renameSync(tmp, join(dataDir, name));
    fsyncPath(dataDir, true);
    return { backup, dataDir, replacedDir, restored: pending.map(([, n]) => n) };
  } catch (err) {
    for (const t of temps) {
      try {
        unlinkSync(t);
      } catch {
        // not written, or renamed already
      }
    }
    throw err;
  } finally {
    claim.release();
    owner?.(join(dataDir, CLAIM_FILE));
  }
}

/**
 * Run as root on a data directory owned by the box's user, the new files are given to that user: a root-owned
 * database or lock file would stop the box (it runs as venue-box). Otherwise they are the caller's.
 */
export function ownerFor(dataDir: string): ((path: string) => void) | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const { uid, gid } = statSync(dataDir);
  if (uid === 0) return undefined;
  return (path) => {
    if (existsSync(path)) chownSync(path, uid, gid);
  };
}
