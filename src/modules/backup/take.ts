import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  statSync,
  unlinkSync,
} from 'node:fs';
import { hostname } from 'node:os';
import { basename, join } from 'node:path';
import Database from 'better-sqlite3';
import pkg from '../../../package.json';
import { DB_FILE, openDatabase } from '../../db/open.js';
import { betterSqliteOptions } from '../../native/addons.js';
import { freeBytesOf, fsyncPath } from '../../shared/files.js';
import { type ExitReason, ProcessError } from '../../shared/errors.js';
import { KEY_FILE } from '../../shared/jwt.js';
import { DEVICE_FILE } from '../sync/enrolment/device.js';
import { backupName, takenMsOf, tempName, tempOwnerOf } from './names.js';
import { type KeptBy, retain, type RetentionRule } from './retention.js';

/** The table a backup carries besides the box's own (docs/operations.md "Backups and restore"): what makes it a backup. */
export const BACKUP_TABLE = 'venue_box_backup';
export const BACKUP_FORMAT = 1;
/** The data directory's files a backup carries: the token signing key and the sync device identity. */
export const CARRIED_FILES = [KEY_FILE, DEVICE_FILE] as const;

/** A backup that cannot be taken, listed or read: exit 74 (docs/operations.md "Exit codes"). */
export class BackupError extends ProcessError {
  constructor(message: string, reason: ExitReason = 'io') {
    super(reason, message);
  }
}

export interface BackupTarget {
  /** The box's data directory (absolute). */
  dataDir: string;
  /** Where backups go (absolute). */
  dir: string;
  /** The default directory (inside the data dir) is created; a configured one must exist (a stick not mounted). */
  createDir: boolean;
  keep: RetentionRule;
  /** Free space the data disk keeps when the backups share it (storage.warnFreeBytes). */
  reserveBytes: number;
}

export interface BackupResult {
  file: string;
  bytes: number;
  ms: number;
  removed: string[];
}

/**
 * Takes one backup (docs/operations.md "Backups and restore"): an online copy with SQLite's backup API from a connection of
 * its own (consistent beside a running box: in WAL mode a reader sees one snapshot), plus the key files, written
 * to a temp name, verified with `PRAGMA integrity_check`, fsynced, renamed, the directory fsynced; then the
 * retention rule. Any failure removes the temp files and throws BackupError: no partial file is left, and older
 * backups are only ever removed after a new one is complete.
 */
export async function takeBackup(target: BackupTarget, now: () => number = Date.now): Promise<BackupResult> {
  const started = now();
  const dbFile = join(target.dataDir, DB_FILE);
  if (!existsSync(dbFile)) throw new BackupError(`no database at ${dbFile}`, 'noInput');
  prepareDir(target);
  removeAbandonedTemps(target.dir);

  const tmp = join(target.dir, tempName(started, process.pid));
  const removeTemp = () => {
    for (const f of [tmp, `${tmp}-journal`, `${tmp}-wal`, `${tmp}-shm`]) unlinkQuietly(f);
  };
  // Stopped by a signal (the box stopping, Ctrl-C): the temp files go before the process does.
  const onSignal = (signal: NodeJS.Signals) => {
    removeTemp();
    process.exit(128 + (signal === 'SIGINT' ? 2 : 15));
  };
  process.once('SIGTERM', onSignal).once('SIGINT', onSignal);
  try {
    const source = openDatabase(dbFile);
    try {
      checkSpace(target, source);
      // Created first with mode 0600: SQLite keeps the mode of the file it opens (key material goes inside).
      closeSync(openSync(tmp, 'wx', 0o600));
      // One step (the progress callback sets the pages per step): a write of the box between steps would make
      // SQLite restart the copy from page one. This process blocks nobody while it copies.
      await source.backup(tmp, { progress: () => 0x7fffffff });
    } finally {
      source.close();
    }
    sealCopy(tmp, target.dataDir, started);
    fsyncPath(tmp);
    const file = join(target.dir, backupName(started));
    if (existsSync(file)) throw new BackupError(`${file} exists already`);
    renameSync(tmp, file);
    fsyncPath(target.dir, true);
    const removed = applyRetention(target.dir, target.keep, basename(file));
    return { file, bytes: statSync(file).size, ms: now() - started, removed };
  } catch (err) {
    removeTemp();
    if (err instanceof BackupError) throw err;
    const e = err as NodeJS.ErrnoException;
    throw new BackupError(`backup into ${target.dir} failed: ${e.code ? `${e.code} ` : ''}${e.message}`);
  } finally {
    process.off('SIGTERM', onSignal).off('SIGINT', onSignal);
  }
}

function prepareDir(target: BackupTarget): void {
  if (target.createDir && !existsSync(target.dir)) mkdirSync(target.dir, { mode: 0o700 });
  let isDir = false;
  try {
    isDir = statSync(target.dir).isDirectory();
  } catch {
    // reported below
  }
  if (!isDir) throw new BackupError(`backup directory ${target.dir} does not exist (is the stick mounted?)`);
}

/** Temp files whose writer is gone (killed, power cut): removed. A live writer's (`backup now` beside the box) stay. */
function removeAbandonedTemps(dir: string): void {
  for (const name of readdirSync(dir)) {
    const pid = tempOwnerOf(name);
    if (pid !== undefined && !isAlive(pid)) unlinkQuietly(join(dir, name));
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Backups on the data disk itself must not take the space the box needs to serve: the copy may only use what
 * lies above storage.warnFreeBytes (docs/operations.md "Storage"). On another disk (a stick) a full disk is SQLITE_FULL.
 */
function checkSpace(target: BackupTarget, source: Database.Database): void {
  if (statSync(target.dir).dev !== statSync(target.dataDir).dev) return;
  const need =
    (source.pragma('page_count', { simple: true }) as number) *
    (source.pragma('page_size', { simple: true }) as number);
  const free = freeBytesOf(target.dir);
  if (free - need < target.reserveBytes) {
    throw new BackupError(
      `not enough space for a backup on the data disk: ${mib(free)} free, the copy needs ${mib(need)} ` +
        `and the box keeps ${mib(target.reserveBytes)} (storage.warnFreeBytes); put backup.dir on another disk`,
    );
  }
}

const mib = (bytes: number) => `${(bytes / 1_048_576).toFixed(1)} MiB`;

/** Makes the copy a backup: rollback journal (no -wal/-shm beside a file on a stick), the key files, checked. */
function sealCopy(tmp: string, dataDir: string, takenMs: number): void {
  const copy = new Database(tmp, { ...betterSqliteOptions(), fileMustExist: true });
  try {
    copy.pragma('journal_mode = DELETE');
    const files: Record<string, string> = {};
    for (const name of CARRIED_FILES) {
      const path = join(dataDir, name);
      if (existsSync(path)) files[name] = readFileSync(path).toString('base64');
    }
    copy.exec(`CREATE TABLE ${BACKUP_TABLE} (format INTEGER NOT NULL, taken_at TEXT NOT NULL, version TEXT NOT NULL,
      schema_version INTEGER NOT NULL, data_dir TEXT NOT NULL, host TEXT NOT NULL, files TEXT NOT NULL) STRICT`);
    copy
      .prepare(`INSERT INTO ${BACKUP_TABLE} VALUES (?, ?, ?, ?, ?, ?, ?)`)
      .run(
        BACKUP_FORMAT,
        new Date(takenMs).toISOString(),
        pkg.version,
        copy.pragma('user_version', { simple: true }),
        dataDir,
        hostname(),
        JSON.stringify(files),
      );
    const check = copy.pragma('integrity_check') as { integrity_check: string }[];
    if (check.length !== 1 || check[0]!.integrity_check !== 'ok') {
      throw new BackupError(
        `the copy failed PRAGMA integrity_check: ${check
          .slice(0, 3)
          .map((r) => r.integrity_check)
          .join('; ')}`,
      );
    }
  } finally {
    copy.close();
  }
}

export interface ListedBackup {
  name: string;
  file: string;
  takenMs: number;
  bytes: number;
  keptBy: KeptBy[];
}

/** The finished backups in `dir`, newest first, each with the rules that keep it (none: the next run removes it). */
export function listBackups(dir: string, keep: RetentionRule): ListedBackup[] {
  const found = readdirSync(dir).flatMap((name) => {
    const takenMs = takenMsOf(name);
    return takenMs === undefined ? [] : [{ name, takenMs }];
  });
  const kept = retain(found, keep);
  return found
    .map((b) => ({
      ...b,
      file: join(dir, b.name),
      bytes: statSync(join(dir, b.name)).size,
      keptBy: kept.get(b.name) ?? [],
    }))
    .sort((a, b) => b.takenMs - a.takenMs);
}

/** Never the backup just written: after the clock jumped back, older backups carry later names. */
function applyRetention(dir: string, keep: RetentionRule, written: string): string[] {
  const removed = listBackups(dir, keep).filter((b) => b.keptBy.length === 0 && b.name !== written);
  for (const b of removed) unlinkQuietly(b.file);
  if (removed.length > 0) fsyncPath(dir, true);
  return removed.map((b) => b.name);
}

function unlinkQuietly(file: string): void {
  try {
    unlinkSync(file);
  } catch {
    // gone already, or the stick is gone
  }
}
