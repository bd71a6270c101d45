import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, statSync } from 'node:fs';
import Database from 'better-sqlite3';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, test } from 'vitest';
import {
  checkpointCatchingUp,
  checkpointDue,
  readWalIndex,
  restartWal,
  walCheckpointSchedule,
  type WalIndex,
} from './checkpoint.js';
import { openDatabase, PAGE_SIZE, type Db } from './open.js';
import { walSalts } from '../../test/support/wal.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
function tempDb(): { db: Db; file: string } {
  const dir = mkdtempSync(join(tmpdir(), 'vb-ckpt-'));
  dirs.push(dir);
  const file = join(dir, 'x.db');
  const db = openDatabase(file);
  db.exec('CREATE TABLE t (x BLOB)');
  return { db, file };
}
const index = (frames: number, backfilled: number, change: number): WalIndex => ({
  frames,
  backfilled,
  change,
  pageSize: 4096,
});

test('a checkpoint is due once the frames not copied back reach the bytes given, or when nothing was committed since the last look', () => {
  const mb = 1024 * 1024;
  expect(checkpointDue(undefined, undefined, mb)).toBe(true);
  expect(checkpointDue(index(300, 300, 7), index(300, 300, 7), mb)).toBe(false);
  expect(checkpointDue(index(200, 0, 8), index(100, 0, 7), mb)).toBe(false);
  expect(checkpointDue(index(200, 0, 8), undefined, mb)).toBe(false);
  expect(checkpointDue(index(200, 0, 8), index(200, 0, 8), mb)).toBe(true);
  expect(checkpointDue(index(256, 0, 9), index(100, 0, 7), mb)).toBe(true);
  expect(checkpointDue(index(400, 200, 9), index(300, 200, 8), mb)).toBe(false);
  // Same frames, another change: a commit came (a restart that landed on the same count): not idle.
  expect(checkpointDue(index(200, 0, 9), index(200, 0, 8), mb)).toBe(false);
  // The one frame of restartWal, idle: left alone, or the next commit would restart the WAL again.
  expect(checkpointDue(index(1, 0, 9), index(1, 0, 9), mb)).toBe(false);
  expect(checkpointDue(index(2, 0, 9), index(2, 0, 9), mb)).toBe(true);
});

test('the WAL index read from -shm agrees with what SQLite reports of its WAL', () => {
  const { db, file } = tempDb();
  db.transaction(() => {
    for (let i = 0; i < 50; i++) db.prepare('INSERT INTO t VALUES (?)').run(Buffer.alloc(3000));
  })();
  const fd = openSync(`${file}-shm`, 'r');
  const before = readWalIndex(fd)!;
  const { log, checkpointed } = (db.pragma('wal_checkpoint(PASSIVE)') as { log: number; checkpointed: number }[])[0]!;
  const after = readWalIndex(fd)!;
  db.prepare('INSERT INTO t VALUES (?)').run(Buffer.alloc(10));
  const committed = readWalIndex(fd)!;
  db.close();
  closeSync(fd); // only now: closing it while the connection was open would have dropped its locks
  expect(log).toBeGreaterThan(40);
  expect(before).toMatchObject({ frames: log, backfilled: 0, pageSize: PAGE_SIZE });
  expect(after).toMatchObject({ frames: log, backfilled: checkpointed, change: before.change });
  expect(checkpointed).toBe(log);
  // Every commit bumps the change counter.
  expect(committed.change).toBe(before.change + 1);
});

test('the schedule lets small commits pile up, and checkpoints past the bytes or once the WAL is idle', () => {
  const { db, file } = tempDb();
  const schedule = walCheckpointSchedule(file, 1024 * 1024);
  const commit = (rows: number): void => {
    db.transaction(() => {
      for (let i = 0; i < rows; i++) db.prepare('INSERT INTO t VALUES (?)').run(Buffer.alloc(3000));
    })();
  };
  commit(1);
  expect(schedule.due()).toBe(false);
  commit(1);
  expect(schedule.due()).toBe(false);
  expect(schedule.waiting()).toBe(true);
  // Nothing committed since the last look: the box went idle.
  expect(schedule.due()).toBe(true);
  db.pragma('wal_checkpoint(PASSIVE)');
  expect(schedule.due()).toBe(false);
  // Copied back whole: nothing waits, which lets the checkpointer's thread go (src/db/checkpointer.ts).
  expect(schedule.waiting()).toBe(false);
  commit(1);
  expect(schedule.due()).toBe(false);
  // 2 MB in one commit: past the bytes, although the WAL is not idle.
  commit(700);
  expect(schedule.due()).toBe(true);
  db.close();
});

test('without its -shm file the schedule always checkpoints', () => {
  const schedule = walCheckpointSchedule(join(tmpdir(), 'vb-no-such-dir', 'x.db'), 1024 * 1024);
  expect(schedule.due()).toBe(true);
  expect(schedule.waiting()).toBe(true);
});

/** The POSIX locks this process holds on a file, from /proc/locks (Linux). */
function locksOn(file: string): string[] {
  const { ino } = statSync(file);
  return readFileSync('/proc/locks', 'utf8')
    .split('\n')
    .filter((l) => l.includes(` ${process.pid} `) && l.split(/\s+/)[5]?.endsWith(`:${ino}`))
    .map((l) => l.split(/\s+/).slice(1).join(' '));
}

test("looking at the WAL index keeps SQLite's locks on it; a -shm made anew after the last connection closed is followed", () => {
  const { db, file } = tempDb();
  const schedule = walCheckpointSchedule(file, 1024 * 1024);
  const held = locksOn(`${file}-shm`);
  expect(held.length).toBeGreaterThan(0); // the connection's read lock on the index's DMS byte
  for (let i = 0; i < 3; i++) schedule.due();
  // A descriptor of the file closed by this process would have dropped them all.
  expect(locksOn(`${file}-shm`)).toEqual(held);

  db.close(); // the last connection: SQLite removes the -shm
  const again = openDatabase(file);
  again.transaction(() => {
    for (let i = 0; i < 400; i++) again.prepare('INSERT INTO t VALUES (?)').run(Buffer.alloc(3000));
  })();
  // The new index is read (over 1 MiB waits): an old descriptor of the removed file would show nothing waiting.
  expect(schedule.due()).toBe(true);
  again.close();
});

test('passes catch up with the writers; a reader on an old snapshot ends them as blocked, where a quiet moment would not help', () => {
  const { db, file } = tempDb();
  const insert = (rows: number): void => {
    db.transaction(() => {
      for (let i = 0; i < rows; i++) db.prepare('INSERT INTO t VALUES (?)').run(Buffer.alloc(3000));
    })();
  };
  insert(20);
  expect(checkpointCatchingUp(db, 4)).toMatchObject({ caughtUp: true, blocked: false });

  const reader = new Database(file, { readonly: true });
  reader.exec('BEGIN');
  reader.prepare('SELECT count(*) FROM t').get(); // the read transaction's snapshot starts here
  insert(20);
  const held = checkpointCatchingUp(db, 4);
  expect(held).toMatchObject({ caughtUp: false, blocked: true });
  expect(held.walFrames).toBeGreaterThan(0);

  reader.exec('COMMIT');
  expect(checkpointCatchingUp(db, 4)).toMatchObject({ caughtUp: true, blocked: false });
  reader.close();
  db.close();
});

/** A database whose PASSIVE checkpoints report these (log, checkpointed) pairs in turn. */
const reporting = (...passes: [number, number][]): Db => {
  let at = 0;
  return {
    pragma: () => [{ busy: passes[at]![0] < 0 ? 1 : 0, log: passes[at]![0], checkpointed: passes[at++]![1] }],
  } as unknown as Db;
};

test('under steady commits a reader holding the copy back still ends the passes as blocked; another checkpoint holding the lock too', () => {
  // Frames keep coming (log grows) while the copy stays at 100: a reader's snapshot, whatever the writers do.
  expect(checkpointCatchingUp(reporting([120, 100], [140, 100], [160, 100], [180, 100]), 4)).toEqual({
    walFrames: 140,
    caughtUp: false,
    blocked: true,
  });
  // Frames keep coming and each pass copies them: not blocked, the writers are just fast (a quiet moment helps).
  expect(checkpointCatchingUp(reporting([120, 120], [140, 140], [160, 160], [180, 180]), 4)).toEqual({
    walFrames: 180,
    caughtUp: false,
    blocked: false,
  });
  expect(checkpointCatchingUp(reporting([120, 120], [120, 120]), 4)).toEqual({
    walFrames: 120,
    caughtUp: true,
    blocked: false,
  });
  // SQLITE_BUSY: another process's checkpoint holds the lock; SQLite reports -1 and nothing is known.
  expect(checkpointCatchingUp(reporting([-1, -1]), 4)).toEqual({ walFrames: -1, caughtUp: false, blocked: true });
});

/** A second connection as the checkpointer's thread opens it (src/db/checkpoint-worker.ts). */
function checkpointerConnection(file: string): Db {
  const db = new Database(file, { fileMustExist: true });
  db.pragma('busy_timeout = 0');
  db.pragma('synchronous = NORMAL');
  db.pragma('wal_autocheckpoint = 0');
  return db;
}

test("after a checkpoint that caught up, the checkpointer restarts the WAL and the serving connection's next commit only appends", () => {
  const { db, file } = tempDb();
  const insert = (rows: number): void => {
    db.transaction(() => {
      for (let i = 0; i < rows; i++) db.prepare('INSERT INTO t VALUES (?)').run(Buffer.alloc(3000));
    })();
  };
  const checkpointer = checkpointerConnection(file);
  const shm = openSync(`${file}-shm`, 'r');
  const version = db.pragma('user_version', { simple: true });

  // Without it, the serving connection's commit restarts the WAL (new salts), fsync included.
  insert(50);
  expect(checkpointCatchingUp(checkpointer, 4)).toMatchObject({ caughtUp: true });
  let salts = walSalts(file);
  insert(1);
  expect(walSalts(file)).not.toBe(salts);

  // With it: the checkpointer's commit is the restart (one frame, page 1), the serving one appends after it.
  insert(50);
  expect(checkpointCatchingUp(checkpointer, 4)).toMatchObject({ caughtUp: true });
  salts = walSalts(file);
  expect(restartWal(checkpointer)).toBe(true);
  expect(walSalts(file)).not.toBe(salts);
  expect(readWalIndex(shm)).toMatchObject({ frames: 1, backfilled: 0 });
  salts = walSalts(file);
  insert(1);
  expect(walSalts(file)).toBe(salts);
  expect(readWalIndex(shm)!.frames).toBeGreaterThan(1);

  // Nothing changed but the WAL: every row is there, the schema's version as it was.
  expect(db.prepare('SELECT count(*) AS n FROM t').get()).toEqual({ n: 102 });
  expect(checkpointer.pragma('user_version', { simple: true })).toBe(version);
  expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
  checkpointer.close();
  db.close();
  closeSync(shm);
});

test("the restart never waits for a writer: it gives way, and that writer's commit restarts the WAL", () => {
  const { db, file } = tempDb();
  const checkpointer = checkpointerConnection(file);
  db.prepare('INSERT INTO t VALUES (?)').run(Buffer.alloc(3000));
  expect(checkpointCatchingUp(checkpointer, 4)).toMatchObject({ caughtUp: true });
  const salts = walSalts(file);
  db.exec('BEGIN IMMEDIATE');
  const start = performance.now();
  expect(restartWal(checkpointer)).toBe(false);
  expect(performance.now() - start).toBeLessThan(100); // busy_timeout 0: SQLITE_BUSY at once, no retries
  db.prepare('INSERT INTO t VALUES (?)').run(Buffer.alloc(10));
  db.exec('COMMIT');
  expect(walSalts(file)).not.toBe(salts);
  expect(db.prepare('SELECT count(*) AS n FROM t').get()).toEqual({ n: 2 });
  checkpointer.close();
  db.close();
});

test('the restart trims the WAL file to the limit of the connection that restarts it', () => {
  const { db, file } = tempDb();
  db.pragma('journal_size_limit = -1'); // the serving connection would not trim: the checkpointer does
  const checkpointer = checkpointerConnection(file);
  checkpointer.pragma('journal_size_limit = 1048576');
  db.transaction(() => {
    for (let i = 0; i < 1000; i++) db.prepare('INSERT INTO t VALUES (?)').run(Buffer.alloc(3000));
  })();
  expect(statSync(`${file}-wal`).size).toBeGreaterThan(3 * 1048576);
  expect(checkpointCatchingUp(checkpointer, 4)).toMatchObject({ caughtUp: true });
  expect(restartWal(checkpointer)).toBe(true);
  expect(statSync(`${file}-wal`).size).toBeLessThanOrEqual(1048576);
  expect(db.prepare('SELECT count(*) AS n FROM t').get()).toEqual({ n: 1000 });
  checkpointer.close();
  db.close();
});
