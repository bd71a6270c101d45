import { closeSync, mkdtempSync, openSync, rmSync, statSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, expect, test } from 'vitest';
// @ts-expect-error: a build script in plain JavaScript, without typings
import { workerSource } from '../../scripts/lib/worker-source.mjs';
import {
  claimRestart,
  QUIET_GRANTED,
  QUIET_NONE,
  QUIET_RESTARTING,
  readWalIndex,
  withdrawQuiet,
} from './checkpoint.js';
import { createCheckpointer } from './checkpointer.js';
import { WAL_TRIM_MIN_BYTES } from './wal-room.js';
import type { CheckpointDone } from './open.js';
import { openDatabase } from './open.js';
import { walSalts } from '../../test/support/wal.js';

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

/** A database in `dir` whose WAL holds `rows` rows of 3,000 bytes, and the statement that adds one more. */
function walOfRows(name: string, rows: number) {
  const file = join(dir, name);
  const db = openDatabase(file);
  db.exec('CREATE TABLE t (x BLOB)');
  const insert = db.prepare('INSERT INTO t VALUES (randomblob(3000))');
  for (let i = 0; i < rows; i++) insert.run();
  return { file, db, insert };
}

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

test("the worker restarts the WAL in a quiet moment: the serving thread's writes are held until the restart is committed", async () => {
  const { file, db, insert } = walOfRows('box.db', 50);
  const before = walSalts(file);
  // Open for the whole test: closing a descriptor of -shm would drop the SQLite locks this process holds on it.
  const shm = openSync(`${file}-shm`, 'r');
  const walFrames = (): number => readWalIndex(shm)!.frames;
  expect(walFrames()).toBeGreaterThan(50);

  const seen: string[] = [];
  const errors: unknown[] = [];
  let reported: () => void;
  const report = new Promise<void>((resolve) => {
    reported = resolve;
  });
  const checkpointer = createCheckpointer(db, file, {
    intervalMs: 20,
    walBytes: 1024 * 1024 * 1024, // due only once the WAL goes idle (here: at the second look)
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
  void checkpointer.run();
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

/**
 * A stand-in for the checkpointer's thread, to time the handshake: it asks for a quiet moment, waits `claimAfterMs`,
 * claims the grant as the real one does (QUIET_GRANTED -> QUIET_RESTARTING), holds the write lock `holdMs` if it
 * got it, and reports `reportAfterMs` later (with `restartError` if given).
 */
function fakeWorker(o: {
  claimAfterMs: number;
  holdMs: number;
  reportAfterMs?: number;
  restartError?: string;
}): string {
  const betterSqlite = createRequire(import.meta.url).resolve('better-sqlite3');
  return `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(${JSON.stringify(betterSqlite)});
const grant = new Int32Array(workerData.quietState);
const db = new Database(workerData.file);
db.pragma('busy_timeout = 0');
const sleep = (ms) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
parentPort.on('message', (m) => {
  if (m === 'stop') { db.close(); parentPort.close(); return; }
  if (m !== 'quiet') return;
  sleep(${o.claimAfterMs});
  if (Atomics.compareExchange(grant, 0, ${QUIET_GRANTED}, ${QUIET_RESTARTING}) === ${QUIET_GRANTED}) {
    db.exec('BEGIN IMMEDIATE');
    sleep(${o.holdMs});
    db.exec('COMMIT');
  }
  setTimeout(() => parentPort.postMessage({ seconds: 0, ok: true, walFrames: 1, caughtUp: true,
    restartError: ${JSON.stringify(o.restartError)} }), ${o.reportAfterMs ?? 0});
});
parentPort.postMessage({ quiet: true });
`;
}

/**
 * Runs the serving thread's side against a fake worker. At the release, what the command queue would do: a
 * BEGIN IMMEDIATE, here on a probe connection that never waits, so a lock still held by the worker shows as
 * `locked`. Times are ms since the hold.
 */
async function handshake(worker: string, stopAfterMs?: number, slowHoldMs?: number) {
  const file = join(dir, `fake-${Math.random().toString(36).slice(2)}.db`);
  const db = openDatabase(file);
  // Something to copy back: the checkpointer starts its worker for the checkpoint due once the WAL goes idle.
  db.exec('CREATE TABLE t (x)');
  const probe = new Database(file);
  probe.pragma('busy_timeout = 0');
  const saved = globals.CHECKPOINT_WORKER_SOURCE;
  globals.CHECKPOINT_WORKER_SOURCE = worker;
  const seen: string[] = [];
  const errors: string[] = [];
  const heldMs: number[] = [];
  const heldSlow: boolean[] = [];
  const slowMs: number[] = [];
  let heldAt = 0;
  let released!: () => void;
  const release = new Promise<void>((resolve) => {
    released = resolve;
  });
  let held!: () => void;
  const hold = new Promise<void>((resolve) => {
    held = resolve;
  });
  const checkpointer = createCheckpointer(db, file, {
    intervalMs: 20,
    walBytes: 1024 * 1024 * 1024,
    onError: (err) => errors.push(`error: ${(err as Error).message}`),
    onRestartError: (err) => errors.push(`restart: ${err.message}`),
    onCheckpoint: (done) => seen.push(`report ok=${done.ok}`),
    onHeld: (seconds, slow) => {
      heldMs.push(seconds * 1000);
      heldSlow.push(slow);
    },
    onSlowHold: (ms) => slowMs.push(ms),
    slowHoldMs,
    writes: {
      hold: () => {
        heldAt = performance.now();
        held();
      },
      release: () => {
        let lock = 'free';
        try {
          probe.exec('BEGIN IMMEDIATE');
          probe.exec('ROLLBACK');
        } catch {
          lock = 'locked';
        }
        seen.push(`release after ${Math.round(performance.now() - heldAt)} ms, lock ${lock}`);
        released();
      },
    },
  });
  try {
    void checkpointer.run();
    await hold;
    if (stopAfterMs !== undefined) {
      await new Promise((resolve) => setTimeout(resolve, stopAfterMs));
      seen.push('stop');
      await checkpointer.stop();
    }
    await release;
    await new Promise((resolve) => setTimeout(resolve, 50));
  } finally {
    await checkpointer.stop();
    globals.CHECKPOINT_WORKER_SOURCE = saved;
    probe.close();
    db.close();
  }
  return {
    seen,
    errors,
    heldMs,
    heldSlow,
    slowMs,
    releasedAfter: Number(/after (\d+) ms/.exec(seen.find((s) => s.startsWith('release'))!)![1]),
  };
}

test("a restart the worker claimed in time holds the writes past the grant's 100 ms, until it is committed", async () => {
  const { seen, releasedAfter, heldMs, heldSlow, slowMs } = await handshake(
    fakeWorker({ claimAfterMs: 0, holdMs: 300 }),
    undefined,
    150,
  );
  expect(seen[0]).toMatch(/^release after \d+ ms, lock free$/);
  expect(seen[1]).toBe('report ok=true');
  expect(releasedAfter).toBeGreaterThanOrEqual(290);
  // Told while it lasts (once, past slowHoldMs), and measured when it ends.
  expect(slowMs).toHaveLength(1);
  expect(slowMs[0]).toBeGreaterThanOrEqual(149);
  expect(slowMs[0]).toBeLessThan(290);
  expect(heldMs).toHaveLength(1);
  expect(heldMs[0]).toBeGreaterThanOrEqual(releasedAfter - 2);
  expect(heldSlow).toEqual([true]);
});

test('a quick restart is measured and not told as slow', async () => {
  const { seen, heldMs, heldSlow, slowMs } = await handshake(
    fakeWorker({ claimAfterMs: 0, holdMs: 0, reportAfterMs: 0 }),
    undefined,
    150,
  );
  expect(seen[0]).toMatch(/^release after \d+ ms, lock free$/);
  // Past the threshold the timer would have fired by now: the release cleared it.
  await new Promise((resolve) => setTimeout(resolve, 200));
  expect(slowMs).toEqual([]);
  expect(heldMs).toHaveLength(1);
  expect(heldMs[0]).toBeLessThan(150);
  expect(heldSlow).toEqual([false]);
});

test('a worker that comes for the grant after 100 ms finds it taken back, and the writes go on without it', async () => {
  // The worker comes 300 ms after the hold and reports 600 ms after it: the grant's timer released the writes.
  const { seen, releasedAfter } = await handshake(fakeWorker({ claimAfterMs: 300, holdMs: 300, reportAfterMs: 300 }));
  expect(seen[0]).toMatch(/^release after \d+ ms, lock free$/);
  expect(releasedAfter).toBeGreaterThanOrEqual(95);
  expect(releasedAfter).toBeLessThan(300);
});

test('stopped during a restart, the checkpointer releases the writes once the worker has committed and gone', async () => {
  const { seen, releasedAfter } = await handshake(fakeWorker({ claimAfterMs: 0, holdMs: 400 }), 150);
  expect(seen[0]).toBe('stop');
  expect(seen.find((s) => s.startsWith('release'))).toMatch(/lock free$/);
  expect(releasedAfter).toBeGreaterThanOrEqual(390);
});

test('a failed restart is reported as that; the checkpoint itself counts as done', async () => {
  const { seen, errors } = await handshake(fakeWorker({ claimAfterMs: 0, holdMs: 0, restartError: 'disk I/O error' }));
  expect(errors).toEqual(['restart: WAL restart failed: disk I/O error']);
  expect(seen).toContain('report ok=true');
});

const until = async (what: () => boolean, ms = 5000): Promise<void> => {
  const deadline = performance.now() + ms;
  while (!what()) {
    if (performance.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
};

test('the worker goes once the WAL has stayed copied back for workerIdleMs, and the next commit brings one back', async () => {
  const { file, db, insert } = walOfRows('idle.db', 20);
  const shm = openSync(`${file}-shm`, 'r');
  const events: { what: string; at: number }[] = [];
  const errors: unknown[] = [];
  const seen = (what: string): number => events.filter((e) => e.what === what).length;
  const checkpointer = createCheckpointer(db, file, {
    intervalMs: 20,
    walBytes: 1024 * 1024 * 1024,
    workerIdleMs: 300,
    onError: (err) => errors.push(err),
    onCheckpoint: () => events.push({ what: 'report', at: performance.now() }),
    onWorker: (running) => events.push({ what: running ? 'start' : 'gone', at: performance.now() }),
  });
  void checkpointer.run();
  try {
    await until(() => seen('gone') === 1);
    expect(events.map((e) => e.what)).toEqual(['start', 'report', 'gone']);
    // Gone only after the WAL stayed copied back (restarted: its one frame) for workerIdleMs.
    expect(events[2]!.at - events[1]!.at).toBeGreaterThanOrEqual(300);
    expect(readWalIndex(shm)!.frames).toBe(1);
    // Nothing due while it is gone: no worker comes back without a commit.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(seen('start')).toBe(1);

    for (let i = 0; i < 20; i++) insert.run();
    expect(readWalIndex(shm)!.frames).toBeGreaterThan(20);
    await until(() => seen('report') === 2);
    expect(events.map((e) => e.what)).toEqual(['start', 'report', 'gone', 'start', 'report']);
    // Copied back and restarted by the new worker, as by the first.
    expect(readWalIndex(shm)!.frames).toBe(1);
    expect(errors).toEqual([]);
  } finally {
    await checkpointer.stop();
    db.close();
    closeSync(shm);
  }
  expect(events.at(-1)!.what).toBe('gone');
});

test('a worker that dies unasked is reported and replaced after workerRespawnMs, not at every look', async () => {
  const file = join(dir, 'dies.db');
  const db = openDatabase(file);
  db.exec('CREATE TABLE t (x)');
  const saved = globals.CHECKPOINT_WORKER_SOURCE;
  // Dies at the first checkpoint asked of it, so one stays due.
  globals.CHECKPOINT_WORKER_SOURCE = `require('node:worker_threads').parentPort.on('message', (m) => {
    if (m && m.checkpoint === true) throw new Error('the worker died');
  });`;
  const starts: number[] = [];
  const errors: string[] = [];
  const checkpointer = createCheckpointer(db, file, {
    intervalMs: 20,
    walBytes: 1024 * 1024 * 1024,
    workerRespawnMs: 400,
    onError: (err) => errors.push((err as Error).message),
    onWorker: (running) => {
      if (running) starts.push(performance.now());
    },
  });
  try {
    void checkpointer.run();
    await until(() => starts.length === 2);
    expect(starts[1]! - starts[0]!).toBeGreaterThanOrEqual(400);
    await until(() => errors.length === 2);
    expect(errors).toEqual(['the worker died', 'the worker died']);
  } finally {
    await checkpointer.stop();
    globals.CHECKPOINT_WORKER_SOURCE = saved;
    db.close();
  }
});

test('a worker that cannot be started is reported, and one is started again after workerRespawnMs', async () => {
  const file = join(dir, 'no-thread.db');
  const db = openDatabase(file);
  db.exec('CREATE TABLE t (x)');
  const saved = globals.CHECKPOINT_WORKER_SOURCE!;
  const errors: string[] = [];
  const starts: number[] = [];
  const reports: number[] = [];
  const checkpointer = createCheckpointer(db, file, {
    intervalMs: 20,
    walBytes: 1024 * 1024 * 1024,
    workerRespawnMs: 300,
    onError: (err) => errors.push((err as Error).message),
    onCheckpoint: () => reports.push(performance.now()),
    onWorker: (running) => {
      if (running) starts.push(performance.now());
    },
  });
  try {
    void checkpointer.run();
    // What a thread that cannot be made looks like to the box: `new Worker` throws (here: a source that is no text).
    (globals as { CHECKPOINT_WORKER_SOURCE?: unknown }).CHECKPOINT_WORKER_SOURCE = 42;
    const failedAt = performance.now();
    await until(() => errors.length === 1);
    globals.CHECKPOINT_WORKER_SOURCE = saved;
    expect(errors[0]).toMatch(/string/);
    await until(() => reports.length === 1);
    expect(starts).toHaveLength(1);
    expect(starts[0]! - failedAt).toBeGreaterThanOrEqual(300);
    expect(errors).toHaveLength(1);
  } finally {
    globals.CHECKPOINT_WORKER_SOURCE = saved;
    await checkpointer.stop();
    db.close();
  }
});

test("with no room left on the disk, the worker's restart trims the WAL file, and the serving connection's limit follows", async () => {
  // 600 rows of 3,000 bytes: a WAL file of some 2 MB, on a disk whose room lets the WAL have nothing.
  const { file, db } = walOfRows('trim.db', 600);
  const walBytes = (): number => statSync(`${file}-wal`).size;
  expect(walBytes()).toBeGreaterThan(1024 * 1024);
  const requests: number[] = [];
  const errors: unknown[] = [];
  const checkpointer = createCheckpointer(db, file, {
    intervalMs: 20,
    walBytes: 32 * 1024 * 1024,
    walRoom: () => {
      requests.push(0);
      return { allowance: 0, walFileBytes: walBytes() };
    },
    onError: (err) => errors.push(err),
    writes: { hold: () => undefined, release: () => undefined },
  });
  void checkpointer.run();
  try {
    const start = performance.now();
    while (walBytes() > WAL_TRIM_MIN_BYTES && performance.now() - start < 5000) await sleep(20);
    // Restarted by the worker with journal_size_limit 0: what is left is the restart's own frame.
    expect(errors).toEqual([]);
    expect(walBytes()).toBeLessThanOrEqual(WAL_TRIM_MIN_BYTES);
    expect(db.pragma('journal_size_limit', { simple: true })).toBe(0);
    // A WAL so small is not trimmed again: the looks go on, and no checkpoint is due for it.
    const looks = requests.length;
    await sleep(200);
    expect(requests.length).toBeGreaterThan(looks);
    expect(walBytes()).toBeLessThanOrEqual(WAL_TRIM_MIN_BYTES);
  } finally {
    await checkpointer.stop();
    db.close();
  }
});
