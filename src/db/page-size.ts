import { existsSync, renameSync, rmSync, statfsSync } from 'node:fs';
import { dirname } from 'node:path';
import { performance } from 'node:perf_hooks';
import Database from 'better-sqlite3';
import type { Logger } from '../log.js';
import { fsyncPath } from '../modules/backup/take.js';
import { betterSqliteOptions } from '../native/addons.js';
import { PAGE_SIZE } from './open.js';

/** Free space of the directory's disk in bytes. */
const freeBytesOf = (dir: string): number => {
  const s = statfsSync(dir);
  return s.bavail * s.bsize;
};

/**
 * Rewrites a database made with another page size than PAGE_SIZE (a box from before it) into one with it, once, at
 * the start, before anything else opens the file (docs/operations.md "What a `new` writes"). SQLite cannot change
 * the page size of a database in WAL mode in place: `VACUUM INTO` writes a copy with the new size beside it, which
 * is synced and renamed over the old file once the old WAL is checkpointed and removed (a WAL is only valid for
 * the file it was written for). Cut short anywhere, the old file is whole: the copy is removed at the next start
 * and the rewrite begins again. Without room for the copy (twice the database's live pages free), or when SQLite fails
 * to write it, it is left for a later start and the box serves from the old file as before. Returns whether the
 * file was rewritten.
 */
export function convertPageSize(file: string, log: Logger, freeBytes: (dir: string) => number = freeBytesOf): boolean {
  const copy = `${file}.page-size`;
  rmSync(copy, { force: true });
  if (!existsSync(file)) return false;
  const started = performance.now();
  const db = new Database(file, betterSqliteOptions());
  let from: number;
  try {
    from = db.pragma('page_size', { simple: true }) as number;
    if (from === PAGE_SIZE) return false;
    const live = ((db.pragma('page_count', { simple: true }) as number) - (db.pragma('freelist_count', { simple: true }) as number)) * from;
    const free = freeBytes(dirname(file));
    if (free < 2 * live) {
      log.warn({ pageSize: from, liveBytes: live, freeBytes: free },
        `the database keeps its ${from}-byte pages: rewriting it with ${PAGE_SIZE}-byte pages needs twice its size free`);
      return false;
    }
    db.pragma(`page_size = ${PAGE_SIZE}`);
    db.prepare('VACUUM INTO ?').run(copy);
    const [checkpoint] = db.pragma('wal_checkpoint(TRUNCATE)') as { busy: number }[];
    if (checkpoint?.busy !== 0) throw new Error('the WAL could not be checkpointed');
  } catch (err) {
    rmSync(copy, { force: true });
    log.warn({ err }, 'the database keeps its pages: rewriting it failed');
    return false;
  } finally {
    db.close();
  }
  fsyncPath(copy);
  rmSync(`${file}-wal`, { force: true });
  rmSync(`${file}-shm`, { force: true });
  renameSync(copy, file);
  fsyncPath(dirname(file), true);
  log.info({ from, to: PAGE_SIZE, ms: Math.round(performance.now() - started) }, 'database rewritten with smaller pages');
  return true;
}
