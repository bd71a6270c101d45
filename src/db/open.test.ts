import { expect, test } from 'vitest';
import { type Db, startCheckpointer } from './open.js';

// A checkpoint writes into the database file: on a full SD card it fails with SQLITE_FULL. Thrown from the
// timer, that would end the process; the next tick tries again, and the WAL keeps every commit meanwhile.
test('a failing checkpoint is reported, never thrown out of its timer', async () => {
  const errors: unknown[] = [];
  const db = {
    pragma: () => {
      throw new Error('database or disk is full');
    },
  } as unknown as Db;
  const stop = startCheckpointer(db, 5, (err) => errors.push(err));
  await new Promise((r) => setTimeout(r, 40));
  stop();
  expect(errors.length).toBeGreaterThan(0);
  expect(String(errors[0])).toContain('disk is full');
});

test('PASSIVE checkpoints keep the WAL small while the box writes', async () => {
  const { mkdtempSync, statSync } = await import('node:fs');
  const { join } = await import('node:path');
  const { tmpdir } = await import('node:os');
  const { openDatabase } = await import('./open.js');
  const file = join(mkdtempSync(join(tmpdir(), 'vb-wal-')), 'x.db');
  const db = openDatabase(file);
  db.exec('CREATE TABLE t (x BLOB)');
  const stop = startCheckpointer(db, 10);
  for (let round = 0; round < 5; round++) {
    db.transaction(() => {
      for (let i = 0; i < 200; i++) db.prepare('INSERT INTO t VALUES (?)').run(Buffer.alloc(4096));
    })();
    await new Promise((r) => setTimeout(r, 30));
  }
  stop();
  // Without checkpoints the WAL would hold all 1,000 4 KiB rows (> 4 MB); it is reused after each checkpoint.
  expect(statSync(`${file}-wal`).size).toBeLessThan(2 * 1024 * 1024);
  db.close();
});

test('each checkpoint is reported with its duration and the WAL frames, or as a failure', async () => {
  const done: { ok: boolean; walFrames: number; seconds: number }[] = [];
  const fine = { pragma: () => [{ busy: 0, log: 12, checkpointed: 12 }] } as unknown as Db;
  let stop = startCheckpointer(fine, 5, undefined, (d) => done.push(d));
  await new Promise((r) => setTimeout(r, 40));
  stop();
  const failing = {
    pragma: () => {
      throw new Error('disk I/O error');
    },
  } as unknown as Db;
  stop = startCheckpointer(
    failing,
    5,
    () => undefined,
    (d) => done.push(d),
  );
  await new Promise((r) => setTimeout(r, 40));
  stop();
  expect(done[0]).toMatchObject({ ok: true, walFrames: 12 });
  expect(done.at(-1)).toMatchObject({ ok: false, walFrames: -1 });
  expect(done.every((d) => d.seconds >= 0 && d.seconds < 1)).toBe(true);
});

// A writer on another thread commits every 2 ms or so, as the box under steady load: a checkpoint pass always
// finds new frames behind it. The WAL must still restart (its frame count falls) and stay bounded. With one pass
// a tick, as before, it never restarted here (0 restarts, the WAL growing by every commit).
// The box waits for 32 MiB; 1 MiB here gives many cycles in the test's 2.5 s, so a restart shows in the reports.
test.each([
  ['at every tick', undefined],
  ['once 1 MiB waits', 1024 * 1024],
])('under a steady stream of commits the WAL still restarts and stays small (checkpoints %s)', async (_, due) => {
  const { mkdtempSync, rmSync, statSync } = await import('node:fs');
  const { join } = await import('node:path');
  const { tmpdir } = await import('node:os');
  const { Worker } = await import('node:worker_threads');
  const { openDatabase } = await import('./open.js');
  const dir = mkdtempSync(join(tmpdir(), 'vb-wal-'));
  const file = join(dir, 'x.db');
  const db = openDatabase(file);
  db.exec('CREATE TABLE t (x BLOB)');
  const writer = new Worker(
    `
    const Database = require('better-sqlite3');
    const { workerData, parentPort } = require('node:worker_threads');
    const db = new Database(workerData, { fileMustExist: true });
    db.pragma('synchronous = NORMAL');
    db.pragma('wal_autocheckpoint = 0');
    db.pragma('journal_size_limit = 1048576');
    const insert = db.prepare('INSERT INTO t VALUES (?)');
    const commit = db.transaction(() => { for (let i = 0; i < 30; i++) insert.run(Buffer.alloc(3000)); });
    const timer = setInterval(commit, 2);
    parentPort.on('message', () => { clearInterval(timer); db.close(); parentPort.close(); });
  `,
    { eval: true, workerData: file },
  );
  const frames: number[] = [];
  const stop = startCheckpointer(db, 100, undefined, (d) => frames.push(d.walFrames), due);
  await new Promise((r) => setTimeout(r, 2500));
  stop();
  writer.postMessage('stop');
  await new Promise((r) => writer.once('exit', r));
  const restarts = frames.filter((n, i) => i > 0 && n < frames[i - 1]!).length;
  const walBytes = statSync(`${file}-wal`).size;
  db.close();
  rmSync(dir, { recursive: true, force: true });
  expect(restarts).toBeGreaterThan(0);
  // Up to 1,250 commits of 30 rows: without restarts the WAL holds them all (over 100 MB).
  expect(walBytes).toBeLessThan(64 * 1024 * 1024);
});
