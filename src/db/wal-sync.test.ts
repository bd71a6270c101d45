import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, expect, test } from 'vitest';
import { createSyncRounds, createWalSync, durableWrites } from './wal-sync.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** An fsync that finishes when the test says so; counts how often it ran. */
function heldFsync() {
  const pending: (() => void)[] = [];
  let runs = 0;
  return {
    fsync: () => new Promise<void>((resolve) => {
      runs++;
      pending.push(resolve);
    }),
    finish: async () => {
      pending.shift()!();
      await new Promise((r) => setImmediate(r));
    },
    runs: () => runs,
  };
}

test('what is asked for together shares one fsync; what comes while it runs waits for the next one, in order', async () => {
  const disk = heldFsync();
  const sync = createSyncRounds(disk.fsync);
  const heard: string[] = [];
  expect(sync.idle()).toBe(true);
  sync.afterSync(() => heard.push('a'));
  sync.afterSync(() => heard.push('b'));
  expect(sync.idle()).toBe(false);
  await new Promise((r) => setImmediate(r));
  sync.afterSync(() => heard.push('c'));
  expect(disk.runs()).toBe(1);
  expect(heard).toEqual([]);

  await disk.finish();
  // c was asked for after the first fsync began: the commits before it were not all covered by that one.
  expect(heard).toEqual(['a', 'b']);
  expect(disk.runs()).toBe(2);
  await disk.finish();
  expect(heard).toEqual(['a', 'b', 'c']);
  expect(sync.idle()).toBe(true);
  expect(disk.runs()).toBe(2);
});

test('a failed fsync reaches everyone of its round; the next round syncs again', async () => {
  let fail = true;
  const sync = createSyncRounds(async () => {
    if (fail) throw Object.assign(new Error('EIO'), { code: 'EIO' });
  });
  const first = await new Promise<Error | undefined>((resolve) => sync.afterSync(resolve));
  expect((first as NodeJS.ErrnoException).code).toBe('EIO');
  fail = false;
  expect(await new Promise<Error | undefined>((resolve) => sync.afterSync(resolve))).toBeUndefined();
});

test('on a real database: a relaxed commit is answered after the WAL file was synced; a missing WAL is an error', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'vb-walsync-'));
  dirs.push(dir);
  const db = new Database(join(dir, 'box.db'));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.exec('CREATE TABLE t (x INTEGER)');
  const sync = createWalSync(join(dir, 'box.db-wal'));
  const writes = durableWrites(db, sync);
  writes.transaction(() => db.prepare('INSERT INTO t VALUES (1)').run());
  // The connection is back at FULL for every other writer.
  expect(db.pragma('synchronous', { simple: true })).toBe(2);
  await writes.synced();
  expect(db.prepare('SELECT COUNT(*) FROM t').pluck().get()).toBe(1);
  await sync.close();
  db.close();

  const missing = createWalSync(join(dir, 'nothing.db-wal'));
  const err = await new Promise<Error | undefined>((resolve) => missing.afterSync(resolve));
  expect((err as NodeJS.ErrnoException).code).toBe('ENOENT');
});
