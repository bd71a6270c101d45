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
    fsync: () =>
      new Promise<void>((resolve) => {
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

test('a failed fsync reaches everyone of its round and is final: no later round syncs or succeeds', async () => {
  let fsyncs = 0;
  const failures: Error[] = [];
  const sync = createSyncRounds(
    async () => {
      fsyncs++;
      throw Object.assign(new Error('EIO'), { code: 'EIO' });
    },
    { failed: (err) => failures.push(err) },
  );
  const round = await Promise.all(
    [1, 2].map(() => new Promise<Error | undefined>((resolve) => sync.afterSync(resolve))),
  );
  expect(round.map((e) => (e as NodeJS.ErrnoException).code)).toEqual(['EIO', 'EIO']);
  // Linux may report success for the next fsync although the pages of the failed one never reached the disk.
  const later = await new Promise<Error | undefined>((resolve) => sync.afterSync(resolve));
  expect((later as NodeJS.ErrnoException).code).toBe('EIO');
  expect(fsyncs).toBe(1);
  expect(failures).toHaveLength(1);
});

test('a callback that throws is reported; the others of its round still run and later rounds go on', async () => {
  const thrown: unknown[] = [];
  const sync = createSyncRounds(async () => undefined, { callbackThrew: (err) => thrown.push(err) });
  const heard: string[] = [];
  sync.afterSync(() => {
    throw new Error('bug');
  });
  await new Promise<void>((resolve) =>
    sync.afterSync(() => {
      heard.push('second');
      resolve();
    }),
  );
  await new Promise<void>((resolve) =>
    sync.afterSync(() => {
      heard.push('later');
      resolve();
    }),
  );
  expect(heard).toEqual(['second', 'later']);
  expect(thrown).toHaveLength(1);
  expect(sync.idle()).toBe(true);
});

test('closed, the rounds finish what was asked and refuse anything new', async () => {
  const disk = heldFsync();
  const sync = createSyncRounds(disk.fsync);
  let first: Error | undefined | 'pending' = 'pending';
  sync.afterSync((err) => {
    first = err;
  });
  await new Promise((r) => setImmediate(r));
  let closed = false;
  const closing = sync.close().then(() => {
    closed = true;
  });
  await new Promise((r) => setImmediate(r));
  expect(closed).toBe(false);
  await disk.finish();
  await closing;
  expect(first).toBeUndefined();
  const refused = await new Promise<Error | undefined>((resolve) => sync.afterSync(resolve));
  expect(refused?.message).toMatch(/closed/);
  expect(disk.runs()).toBe(1);
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

test('each fsync that succeeded is reported with its duration; a throwing report neither fails the round nor stops the rounds', async () => {
  const disk = heldFsync();
  const durations: number[] = [];
  const thrown: unknown[] = [];
  const sync = createSyncRounds(disk.fsync, {
    synced(seconds) {
      durations.push(seconds);
      if (durations.length === 1) throw new Error('a broken metric');
    },
    callbackThrew: (err) => thrown.push(err),
  });
  const answers: (Error | undefined)[] = [];
  sync.afterSync((err) => answers.push(err));
  await new Promise((r) => setImmediate(r));
  await new Promise((r) => setTimeout(r, 20));
  await disk.finish();
  sync.afterSync((err) => answers.push(err));
  await new Promise((r) => setImmediate(r));
  await disk.finish();
  expect(answers).toEqual([undefined, undefined]);
  expect(durations).toHaveLength(2);
  // The first fsync was held for 20 ms.
  expect(durations[0]).toBeGreaterThanOrEqual(0.015);
  expect(thrown).toHaveLength(1);
  expect(sync.idle()).toBe(true);
});
