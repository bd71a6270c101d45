import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, test } from 'vitest';
import { type WalIndex, trimDue, walCheckpointSchedule } from './checkpoint.js';
import { openDatabase } from './open.js';
import { floorProblem, MIN_FLOOR_BYTES, measureWalRoom, walAllowance, WAL_TRIM_MIN_BYTES } from './wal-room.js';

const MiB = 1024 * 1024;
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

test("the WAL's allowance is a quarter of the room above the floor, its own file counted as free", () => {
  expect(walAllowance(9 * MiB, 0, MiB)).toBe(2 * MiB);
  // A WAL of 4 MiB with 5 MiB free beside it: the same room, the same allowance.
  expect(walAllowance(5 * MiB, 4 * MiB, MiB)).toBe(2 * MiB);
  // At or below the floor: nothing, so the WAL is checkpointed whenever anything waits, and trimmed at its restart.
  expect(walAllowance(MiB, 0, MiB)).toBe(0);
  expect(walAllowance(0, 0, MiB)).toBe(0);
});

test('a WAL file past its allowance is due for a trim once it is past WAL_TRIM_MIN_BYTES too', () => {
  const idle: WalIndex = { frames: 1, backfilled: 1, change: 3, pageSize: 1024 };
  expect(trimDue(idle, { allowance: MiB, walFileBytes: 2 * MiB })).toBe(true);
  expect(trimDue(idle, { allowance: MiB, walFileBytes: MiB })).toBe(false);
  // What a restart leaves (the first commit's frames) is never a reason for another.
  expect(trimDue(idle, { allowance: 0, walFileBytes: WAL_TRIM_MIN_BYTES })).toBe(false);
  expect(trimDue(idle, { allowance: 0, walFileBytes: WAL_TRIM_MIN_BYTES + 1 })).toBe(true);
  expect(trimDue(undefined, { allowance: 0, walFileBytes: MiB })).toBe(false);
  expect(trimDue(idle, undefined)).toBe(false);
});

test('the schedule checkpoints at the allowance when it is under walBytes, and trims a WAL file past it', () => {
  const dir = mkdtempSync(join(tmpdir(), 'vb-wal-room-'));
  dirs.push(dir);
  const file = join(dir, 'x.db');
  const db = openDatabase(file);
  db.exec('CREATE TABLE t (x BLOB)');
  let room = { allowance: 64 * MiB, walFileBytes: 0 };
  const schedule = walCheckpointSchedule(file, 32 * MiB, () => room);
  const commit = (rows: number): void => {
    db.transaction(() => {
      for (let i = 0; i < rows; i++) db.prepare('INSERT INTO t VALUES (?)').run(Buffer.alloc(3000));
    })();
  };
  commit(1);
  expect(schedule.due()).toBe(false);
  expect([schedule.walLimit(), schedule.tight()]).toEqual([64 * MiB, false]);
  // The disk fills: 300 KB waiting is past an allowance of 256 KiB, although far from walBytes.
  room = { allowance: 256 * 1024, walFileBytes: 400 * 1024 };
  commit(100);
  expect(schedule.due()).toBe(true);
  expect([schedule.walLimit(), schedule.tight()]).toEqual([256 * 1024, true]);
  // Copied back whole, but the file holds more of the disk than it may: due, for the restart that trims it.
  db.pragma('wal_checkpoint(PASSIVE)');
  commit(1);
  schedule.due();
  room = { allowance: 0, walFileBytes: 400 * 1024 };
  expect(schedule.due()).toBe(true);
  db.close();
});

test("measureWalRoom reads the disk and the WAL file's size; no WAL file counts as none", () => {
  const dir = mkdtempSync(join(tmpdir(), 'vb-wal-room-'));
  dirs.push(dir);
  expect(measureWalRoom(dir, join(dir, 'x.db-wal'), MiB).walFileBytes).toBe(0);
  writeFileSync(join(dir, 'x.db-wal'), Buffer.alloc(5000));
  const room = measureWalRoom(dir, join(dir, 'x.db-wal'), MiB);
  expect(room.walFileBytes).toBe(5000);
  expect(room.allowance).toBeGreaterThan(0);
  // A directory that is not there: the disk cannot be measured, and the WAL goes by walBytes alone.
  expect(measureWalRoom(join(dir, 'gone'), join(dir, 'gone', 'x.db-wal'), MiB).allowance).toBe(
    Number.POSITIVE_INFINITY,
  );
});

test('a floor under MIN_FLOOR_BYTES is a problem naming the option; at it and above, none', () => {
  expect(floorProblem(0)).toMatch(/^\/storage\/minFreeBytes: 0 is below 1048576/);
  expect(floorProblem(MIN_FLOOR_BYTES - 1)).toMatch(/minFreeBytes/);
  expect(floorProblem(MIN_FLOOR_BYTES)).toBeUndefined();
  expect(floorProblem(64 * MiB)).toBeUndefined();
});
