import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
// @ts-expect-error: a build script in plain JavaScript, without typings
import { workerSource } from '../../scripts/lib/worker-source.mjs';
import { claimRestart, QUIET_GRANTED, QUIET_NONE, QUIET_RESTARTING, readWalIndex, withdrawQuiet } from './checkpoint.js';
import { createCheckpointer } from './checkpointer.js';
import type { CheckpointDone } from './open.js';
import { openDatabase } from './open.js';

// The checkpointer's thread as the builds bundle it (scripts/lib/worker-source.mjs): without its source the
// checkpointer runs inline on the event loop, and none of the quiet moment below happens.
const globals = globalThis as { CHECKPOINT_WORKER_SOURCE?: string };
const dir = mkdtempSync(join(tmpdir(), 'vb-ckpt-worker-'));
beforeAll(async () => {
  globals.CHECKPOINT_WORKER_SOURCE = (await workerSource(process.cwd(), 'src/db/checkpoint-worker.ts')) as string;
}, 30_000);
afterAll(() => {
  delete globals.CHECKPOINT_WORKER_SOURCE;
  rmSync(dir, { recursive: true, force: true });
});

/** The salts of the WAL's header (https://sqlite.org/walformat.html): new ones at every restart of the WAL. */
const walSalts = (file: string): string => readFileSync(`${file}-wal`).subarray(16, 24).toString('hex');

test('the grant is used or taken back, never both: the worker restarts only while it is in force', () => {
  const state = new Int32Array(new SharedArrayBuffer(4));
  // Taken back first (its time was up): the worker may no longer restart.
  Atomics.store(state, 0, QUIET_GRANTED);
  expect(withdrawQuiet(state)).toBe(true);
  expect(claimRestart(state)).toBe(false);
  // Claimed first: the serving thread cannot take it back, and holds on until the worker's report.
  Atomics.store(state, 0, QUIET_GRANTED);
  expect(claimRestart(state)).toBe(true);
  expect(withdrawQuiet(state)).toBe(false);
  expect(Atomics.load(state, 0)).toBe(QUIET_RESTARTING);
  // Nothing granted: neither.
  Atomics.store(state, 0, QUIET_NONE);
  expect(claimRestart(state)).toBe(false);
  expect(withdrawQuiet(state)).toBe(false);
});

test('the worker restarts the WAL in a quiet moment: the serving thread\'s writes are held until the restart is committed', async () => {
  const file = join(dir, 'box.db');
  const db = openDatabase(file);
  db.exec('CREATE TABLE t (x BLOB)');
  const insert = db.prepare('INSERT INTO t VALUES (randomblob(3000))');
  for (let i = 0; i < 50; i++) insert.run();
  const before = walSalts(file);
  // Open for the whole test: closing a descriptor of -shm would drop the SQLite locks this process holds on it.
  const shm = openSync(`${file}-shm`, 'r');
  const walFrames = (): number => readWalIndex(shm)!.frames;
  expect(walFrames()).toBeGreaterThan(50);

  const seen: string[] = [];
  const errors: unknown[] = [];
  let reported: () => void;
  const report = new Promise<void>((resolve) => { reported = resolve; });
  const checkpointer = createCheckpointer(db, file, {
    intervalMs: 20,
    walBytes: 1024 * 1024 * 1024, // due only once the WAL goes idle (here: at the first look)
    onError: (err) => errors.push(err),
    onCheckpoint: (done: CheckpointDone) => {
      seen.push(`report ${done.ok}`);
      reported();
    },
    writes: {
      hold: () => seen.push(`hold ${walSalts(file) === before ? 'old' : 'new'} WAL`),
      // What the held writes find at their release: the WAL restarted by the worker, one frame of its own.
      release: () => seen.push(`release ${walSalts(file) === before ? 'old' : 'new'} WAL, ${walFrames()} frame`),
    },
  });
  checkpointer.start();
  try {
    await report;
    expect(errors).toEqual([]);
    expect(seen).toEqual(['hold old WAL', 'release new WAL, 1 frame', 'report true']);
    // The serving connection's next commit only appends to the restarted WAL.
    const salts = walSalts(file);
    insert.run();
    expect(walSalts(file)).toBe(salts);
    expect(walFrames()).toBeGreaterThan(1);
  } finally {
    await checkpointer.stop();
    db.close();
    closeSync(shm);
  }
});
