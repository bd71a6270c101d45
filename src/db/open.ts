import { performance } from 'node:perf_hooks';
import Database from 'better-sqlite3';
import { betterSqliteOptions } from '../native/addons.js';
import { checkpointCatchingUp, WAL_SIZE_LIMIT_BYTES, walCheckpointSchedule } from './checkpoint.js';

export type Db = Database.Database;

/** The box's one database file inside the data directory. */
export const DB_FILE = 'venue-box.db';

/**
 * SQLite writes a whole page to the WAL for every b-tree page a transaction changes, and a command changes about
 * fifteen b-trees by a few hundred bytes each: with 1 KiB pages a `new` writes 23 KB to the WAL and 34-37 KB to the
 * disk, checkpoint included, where 4 KiB pages wrote 76 and 86-91, for a CPU per command the benchmark does not
 * tell apart (docs/performance.md "What a `new` writes").
 */
export const PAGE_SIZE = 1024;

/**
 * Opens the box's one database: WAL, foreign keys, busy timeout, and synchronous=FULL so a commit is on the disk
 * before anything is answered. The command queue and the token endpoint commit with NORMAL instead and answer
 * after an fsync of the WAL off the event loop (src/db/wal-sync.ts; docs/architecture.md "Durability and speed").
 */
export function openDatabase(file: string): Db {
  const db = new Database(file, betterSqliteOptions());
  // Takes effect in a new file only; an older box's file is rewritten by src/db/page-size.ts at its start.
  db.pragma(`page_size = ${PAGE_SIZE}`);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.pragma('foreign_keys = ON');
  db.pragma('busy_timeout = 5000');
  // Each command is applied in a savepoint, whose journal of the pages it changed would otherwise spill past
  // 64 KiB into a temp file in /var/tmp: on the box's SD card, tens of KB more written per command.
  db.pragma('temp_store = MEMORY');
  // 8 MiB of pages (SQLite's default is 2 MiB). Not more: a commit that split a b-tree page scans the whole page
  // cache (docs/performance.md "The page cache": about 45 us a commit at 500 orders/s with 32 MiB), and the box's
  // benchmarks ran no slower with 4 or 8 MiB than with 32 (2-5% less CPU once the file outgrew the cache), with
  // an RSS under load 20-40 MB lower.
  db.pragma('cache_size = -8192');
  // The serving connection never checkpoints inside a commit (a 16 ms stall measured here); the
  // checkpointer runs PASSIVE checkpoints on a timer instead.
  db.pragma('wal_autocheckpoint = 0');
  // After a checkpoint lets the WAL restart, SQLite trims the file back to this size (SD cards are small).
  db.pragma(`journal_size_limit = ${WAL_SIZE_LIMIT_BYTES}`);
  return db;
}

/**
 * A function run in a transaction: called, in BEGIN (a savepoint inside another); `.immediate` and `.deferred`, in
 * BEGIN IMMEDIATE and BEGIN DEFERRED.
 */
export type InTransaction = (<T>(fn: () => T) => T) & { immediate<T>(fn: () => T): T; deferred<T>(fn: () => T): T };

/**
 * better-sqlite3's transaction wrapper made once for `db`, taking the function to run as its argument: every
 * repository's transactions go through one. `db.transaction(fn)` builds four wrapped functions and defines five
 * properties on each at every call, which the command path paid twice a command (its batch and the order's unit
 * of work).
 */
export function inTransaction(db: Db): InTransaction {
  return db.transaction((fn: () => unknown) => fn()) as unknown as InTransaction;
}

/** One checkpoint, for the metrics: its duration, whether it succeeded, the WAL's frames (-1 after a failure). */
export interface CheckpointDone {
  seconds: number;
  ok: boolean;
  walFrames: number;
}

/**
 * Runs a PASSIVE checkpoint every `intervalMs`, or with `walBytes` only when one is due (src/db/checkpoint.ts
 * `checkpointDue`; a database without a file name is checkpointed every time). PASSIVE never waits for readers
 * (a TRUNCATE or RESTART one would wait up to busy_timeout on the event loop while `stock check` reads); once
 * readers let the WAL restart, journal_size_limit trims the file. A failed checkpoint (SQLITE_FULL on a full
 * card, an I/O error) goes to `onError` and is tried again at the next tick: thrown from the timer it would end
 * the process, and the WAL keeps every commit meanwhile. The box runs these on a worker thread (src/db/checkpointer.ts).
 */
export function startCheckpointer(
  db: Db,
  intervalMs = 1000,
  onError: (err: unknown) => void = () => undefined,
  onCheckpoint?: (done: CheckpointDone) => void,
  walBytes?: number,
  paused: () => boolean = () => false,
): () => void {
  const schedule =
    walBytes !== undefined && typeof db.name === 'string' ? walCheckpointSchedule(db.name, walBytes) : undefined;
  const timer = setInterval(() => {
    if (paused() || (schedule && !schedule.due())) return;
    const start = performance.now();
    let walFrames = -1;
    let ok = false;
    try {
      // On the event loop nothing commits between the passes: they catch up at once.
      walFrames = checkpointCatchingUp(db, 16).walFrames;
      ok = true;
    } catch (err) {
      onError(err);
    }
    onCheckpoint?.({ seconds: (performance.now() - start) / 1000, ok, walFrames });
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
