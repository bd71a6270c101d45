import { chmodSync, chownSync, closeSync, existsSync, openSync, readSync, renameSync, rmSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { performance } from 'node:perf_hooks';
import Database from 'better-sqlite3';
import type { Logger } from '../log.js';
import { freeBytesOf, fsyncPath } from '../shared/files.js';
import { betterSqliteOptions } from '../native/addons.js';
import { PAGE_SIZE } from './open.js';

const MAGIC = Buffer.from('SQLite format 3\0');

/**
 * The page size in a database file's header (bytes 16-17; 1 stands for 65,536), read without SQLite; undefined
 * for a file without a header yet.
 */
export function pageSizeOf(file: string): number | undefined {
  const header = Buffer.alloc(18);
  const fd = openSync(file, 'r');
  try {
    if (readSync(fd, header, 0, 18, 0) < 18 || !header.subarray(0, 16).equals(MAGIC)) return undefined;
  } finally {
    closeSync(fd);
  }
  const size = header.readUInt16BE(16);
  return size === 1 ? 65536 : size;
}

/**
 * Rewrites a database made with another page size than PAGE_SIZE (a box from before it) into one with it, once, at
 * the start, after the migrations and before the box opens it (docs/performance.md "What a `new` writes"). SQLite
 * cannot change the page size of a database in WAL mode in place: `VACUUM INTO` writes a copy with the new size
 * beside it, which takes the old file's mode and owner, is synced, and is renamed over the old file once the old
 * WAL is checkpointed and removed (a WAL is only valid for the file it was written for). The connection holds the
 * file's exclusive lock from its first read until the copy is synced, so a command-line tool writing beside the
 * starting box (`stock rebuild`) waits or is refused instead of writing into the old file. Cut short anywhere,
 * the old file is whole: the copy is removed at the next start and the rewrite begins again. Without room for the
 * copy (twice the database's live pages free), with another connection open, or when SQLite fails to write it,
 * it is left for a later start and the box serves from the old file as before. Returns whether it was rewritten.
 */
export function convertPageSize(file: string, log: Logger, freeBytes: (dir: string) => number = freeBytesOf): boolean {
  const copy = `${file}.page-size`;
  const started = performance.now();
  let db: Database.Database | undefined;
  let from = PAGE_SIZE;
  try {
    // The box's own name beside its database: whatever is there is a copy cut short.
    rmSync(copy, { recursive: true, force: true });
    const size = existsSync(file) ? pageSizeOf(file) : undefined;
    if (size === undefined || size === PAGE_SIZE) return false;
    from = size;
    // A tool holding the file gets a second to let go; then the rewrite waits for another start.
    db = new Database(file, { ...betterSqliteOptions(), timeout: 1000 });
    // Taken now and kept (EXCLUSIVE): no other connection reads or writes until this one closes.
    db.pragma('locking_mode = EXCLUSIVE');
    db.exec('BEGIN EXCLUSIVE; COMMIT');
    const live =
      ((db.pragma('page_count', { simple: true }) as number) -
        (db.pragma('freelist_count', { simple: true }) as number)) *
      from;
    const free = freeBytes(dirname(file));
    if (free < 2 * live) {
      log.warn(
        { pageSize: from, liveBytes: live, freeBytes: free },
        `the database keeps its ${from}-byte pages: rewriting it with ${PAGE_SIZE}-byte pages needs twice its size free`,
      );
      return false;
    }
    db.pragma(`page_size = ${PAGE_SIZE}`);
    db.prepare('VACUUM INTO ?').run(copy);
    const [checkpoint] = db.pragma('wal_checkpoint(TRUNCATE)') as { busy: number }[];
    if (checkpoint?.busy !== 0) throw new Error('the WAL could not be checkpointed');
    const old = statSync(file);
    chmodSync(copy, old.mode & 0o7777);
    const made = statSync(copy);
    if (made.uid !== old.uid || made.gid !== old.gid) chownSync(copy, old.uid, old.gid);
    fsyncPath(copy);
  } catch (err) {
    rmSync(copy, { recursive: true, force: true });
    log.warn({ err, pageSize: from }, 'the database keeps its pages: rewriting it failed');
    return false;
  } finally {
    db?.close();
  }
  rmSync(`${file}-wal`, { force: true });
  rmSync(`${file}-shm`, { force: true });
  renameSync(copy, file);
  fsyncPath(dirname(file), true);
  log.info(
    { from, to: PAGE_SIZE, ms: Math.round(performance.now() - started) },
    'database rewritten with smaller pages',
  );
  return true;
}
