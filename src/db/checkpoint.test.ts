import { mkdtempSync, openSync, rmSync } from 'node:fs';
import Database from 'better-sqlite3';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, test } from 'vitest';
import { checkpointCatchingUp, checkpointDue, readWalIndex, walCheckpointSchedule, type WalIndex } from './checkpoint.js';
import { openDatabase, type Db } from './open.js';

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
const index = (frames: number, backfilled: number, change: number): WalIndex => ({ frames, backfilled, change, pageSize: 4096 });

test('a checkpoint is due once the frames not copied back reach the bytes given, or when nothing was committed since the last look', () => {
  const mb = 1024 * 1024;
  expect(checkpointDue(undefined, undefined, mb)).toBe(true);
  expect(checkpointDue(index(300, 300, 7), index(300, 300, 7), mb)).toBe(false);
  expect(checkpointDue(index(200, 0, 8), index(100, 0, 7), mb)).toBe(false);
  expect(checkpointDue(index(200, 0, 8), undefined, mb)).toBe(false);
  expect(checkpointDue(index(200, 0, 8), index(200, 0, 8), mb)).toBe(true);
  expect(checkpointDue(index(256, 0, 9), index(100, 0, 7), mb)).toBe(true);
  expect(checkpointDue(index(400, 200, 9), index(300, 200, 8), mb)).toBe(false);
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
  db.close();
  expect(log).toBeGreaterThan(40);
  expect(before).toMatchObject({ frames: log, backfilled: 0, pageSize: 4096 });
  expect(after).toMatchObject({ frames: log, backfilled: checkpointed, change: before.change });
  expect(checkpointed).toBe(log);
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
  // Nothing committed since the last look: the box went idle.
  expect(schedule.due()).toBe(true);
  db.pragma('wal_checkpoint(PASSIVE)');
  expect(schedule.due()).toBe(false);
  commit(1);
  expect(schedule.due()).toBe(false);
  // 2 MB in one commit: past the bytes, although the WAL is not idle.
  commit(700);
  expect(schedule.due()).toBe(true);
  schedule.close();
  db.close();
});

test('without its -shm file the schedule always checkpoints', () => {
  const schedule = walCheckpointSchedule(join(tmpdir(), 'vb-no-such-dir', 'x.db'), 1024 * 1024);
  expect(schedule.due()).toBe(true);
  schedule.close();
});

test('passes catch up with the writers; a reader on an old snapshot ends them as readerBehind, where a quiet moment would not help', () => {
  const { db, file } = tempDb();
  const insert = (rows: number): void => {
    db.transaction(() => {
      for (let i = 0; i < rows; i++) db.prepare('INSERT INTO t VALUES (?)').run(Buffer.alloc(3000));
    })();
  };
  insert(20);
  expect(checkpointCatchingUp(db, 4)).toMatchObject({ caughtUp: true, readerBehind: false });

  const reader = new Database(file, { readonly: true });
  reader.exec('BEGIN');
  reader.prepare('SELECT count(*) FROM t').get(); // the read transaction's snapshot starts here
  insert(20);
  const held = checkpointCatchingUp(db, 4);
  expect(held).toMatchObject({ caughtUp: false, readerBehind: true });
  expect(held.walFrames).toBeGreaterThan(0);

  reader.exec('COMMIT');
  expect(checkpointCatchingUp(db, 4)).toMatchObject({ caughtUp: true, readerBehind: false });
  reader.close();
  db.close();
});
