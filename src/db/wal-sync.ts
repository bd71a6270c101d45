import { type FileHandle, open } from 'node:fs/promises';
import type { Db } from './open.js';

/**
 * Durability off the event loop (docs/operations.md "Durability and speed"). The command path commits without
 * a sync (relaxedTransactions): SQLite writes the WAL frames without waiting for the disk, which keeps the
 * database consistent but not yet durable. Then one fdatasync of the WAL file on libuv's thread pool makes every commit
 * written before it durable at once; only after it are the commands confirmed and their frames pushed. While one
 * fsync is in flight the loop goes on serving, and everything committed meanwhile waits for the next one: a group
 * commit whose size follows the load, with no fsync on the event loop.
 */
export interface WalSync {
  /**
   * Calls `done` once an fsync of the WAL begun after this call has finished: every commit made before the call
   * is then on the disk. Callbacks run in the order they were given. `done` gets the error of a failed fsync.
   */
  afterSync(done: (err?: Error) => void): void;
  /** True while no fsync is in flight or waited for. */
  idle(): boolean;
}

export function createWalSync(walFile: string): WalSync & { close(): Promise<void> } {
  // Kept open: the WAL is the same file for as long as the box's connection is open (SQLite removes it only
  // when the last connection closes, and journal_size_limit truncates it in place). Reopened after an error.
  let handle: FileHandle | undefined;
  const rounds = createSyncRounds(async () => {
    handle ??= await open(walFile, 'r');
    try {
      await handle.datasync();
    } catch (err) {
      const failed = handle;
      handle = undefined;
      await failed.close().catch(() => undefined);
      throw err;
    }
  });
  return {
    ...rounds,
    /** Once idle: the handle goes before the database closes (which removes the WAL file). */
    async close() {
      await handle?.close();
      handle = undefined;
    },
  };
}

/**
 * The group commit's rounds: `fsync` runs once for everything asked for in one turn of the event loop (it starts
 * at the turn's end, so every commit of the turn shares it), and again for what was asked for while it ran;
 * never twice at once.
 */
export function createSyncRounds(fsync: () => Promise<void>): WalSync {
  let next: ((err?: Error) => void)[] = [];
  let syncing = false;

  async function run(): Promise<void> {
    while (next.length > 0) {
      const round = next;
      next = [];
      let error: Error | undefined;
      try {
        await fsync();
      } catch (err) {
        error = err as Error;
      }
      for (const done of round) done(error);
    }
    syncing = false;
  }

  return {
    afterSync(done) {
      next.push(done);
      if (syncing) return;
      syncing = true;
      setImmediate(() => void run());
    },
    idle: () => !syncing && next.length === 0,
  };
}

/** For a database that has no WAL file (`:memory:` in unit tests): every commit counts as synced at once. */
export const noWalSync: WalSync = { afterSync: (done) => done(), idle: () => true };

/**
 * Runs `fn` in an immediate transaction committed with no sync of its own (synchronous=OFF); the connection is
 * back at FULL afterwards, so every other writer keeps committing durably by itself. The caller tells no one of
 * what it committed before `WalSync.afterSync` calls back.
 *
 * OFF rather than NORMAL: at NORMAL, the commit that restarts the WAL after a checkpoint fsyncs the WAL's new
 * header on the event loop, and while the checkpointer's fsync of the database file is in flight that one waited
 * up to 575 ms (measured at 1,000 orders/s). The header sync keeps a checkpoint from copying frames written after
 * a restart while the old header is still the one on the disk (SQLite ticket ff5be73dee); here nothing copies a
 * frame without syncing the WAL first: the checkpointer's connection syncs it before every checkpoint
 * (synchronous=NORMAL there, src/db/checkpoint-worker.ts), and src/db/wal-sync.ts syncs it before any answer.
 */
export function relaxedTransactions(db: Db): <T>(fn: () => T) => T {
  const off = db.prepare('PRAGMA synchronous = OFF');
  const full = db.prepare('PRAGMA synchronous = FULL');
  return (fn) => {
    off.run();
    try {
      return db.transaction(fn).immediate();
    } finally {
      full.run();
    }
  };
}

/** Writes that answer once durable, with the fsync off the event loop (the token endpoint). */
export interface DurableWrites {
  /** A transaction committed without its own fsync. */
  transaction<T>(fn: () => T): T;
  /** Resolves once every commit made so far is on the disk; rejects with a failed fsync's error. */
  synced(): Promise<void>;
}

export function durableWrites(db: Db, sync: WalSync): DurableWrites {
  return {
    transaction: relaxedTransactions(db),
    synced: () => new Promise((resolve, reject) => sync.afterSync((err) => (err ? reject(err) : resolve()))),
  };
}
