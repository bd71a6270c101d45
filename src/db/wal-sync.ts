import { type FileHandle, open } from 'node:fs/promises';
import { performance } from 'node:perf_hooks';
import { type Db, inTransaction } from './open.js';

/**
 * Durability off the event loop (docs/architecture.md "Durability and speed"). The command path commits with
 * synchronous=NORMAL (relaxedTransactions): SQLite writes the WAL frames without waiting for the disk, which
 * keeps the database consistent but not yet durable. Then one fdatasync of the WAL file on libuv's thread pool makes every commit
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
  /** True while no fsync is in flight or waited for (and none has failed). */
  idle(): boolean;
}

/** What the rounds tell their owner (src/box/storage.ts logs both; a failed fsync stops the box). */
export interface SyncHooks {
  /** The first failed fsync: from then on every caller gets this error and nothing is synced again. */
  failed?(err: Error): void;
  /** A callback threw: reported, and the round's other callbacks still run. */
  callbackThrew?(err: unknown): void;
  /** Each fsync that succeeded, with how long it took: how the disk keeps up (the metrics). */
  synced?(seconds: number): void;
}

export function createWalSync(walFile: string, hooks: SyncHooks = {}): WalSync & { close(): Promise<void> } {
  // Kept open: the WAL is the same file for as long as the box's connection is open (SQLite removes it only
  // when the last connection closes, and journal_size_limit truncates it in place).
  let handle: FileHandle | undefined;
  const rounds = createSyncRounds(async () => {
    handle ??= await open(walFile, 'r');
    await handle.datasync();
  }, hooks);
  return {
    ...rounds,
    /** Waits for the round in flight; then the handle goes, before the database closes (which removes the WAL). */
    async close() {
      await rounds.close();
      await handle?.close();
      handle = undefined;
    },
  };
}

/**
 * The group commit's rounds: `fsync` runs once for everything asked for in one turn of the event loop (it starts
 * at the turn's end, so every commit of the turn shares it), and again for what was asked for while it ran;
 * never twice at once. A failed fsync is final: after an fdatasync error Linux may have dropped the pages it
 * could not write and report success for the next one, so nothing may be confirmed after it.
 */
export function createSyncRounds(
  fsync: () => Promise<void>,
  hooks: SyncHooks = {},
): WalSync & { close(): Promise<void> } {
  let next: ((err?: Error) => void)[] = [];
  let syncing = false;
  let failure: Error | undefined;
  let closed = false;
  let finished: Promise<void> = Promise.resolve();

  function call(done: (err?: Error) => void, err?: Error): void {
    try {
      done(err);
    } catch (thrown) {
      hooks.callbackThrew?.(thrown);
    }
  }

  async function run(): Promise<void> {
    try {
      while (next.length > 0) {
        const round = next;
        next = [];
        if (!failure) {
          const start = performance.now();
          try {
            await fsync();
          } catch (err) {
            failure = err as Error;
            hooks.failed?.(failure);
          }
          if (!failure) call(() => hooks.synced?.((performance.now() - start) / 1000));
        }
        for (const done of round) call(done, failure);
      }
    } finally {
      syncing = false;
    }
  }

  return {
    afterSync(done) {
      if (closed) {
        call(done, new Error('the WAL is closed: the box is stopping'));
        return;
      }
      next.push(done);
      if (syncing) return;
      syncing = true;
      finished = new Promise((resolve) => setImmediate(() => void run().then(resolve)));
    },
    // Never idle after a failure: a durable writer's frames then wait for a round, which refuses them.
    idle: () => !failure && !syncing && next.length === 0,
    /** No new rounds; resolves once the one in flight has answered. */
    async close() {
      closed = true;
      await finished;
    },
  };
}

/** For a database that has no WAL file (`:memory:` in unit tests): every commit counts as synced at once. */
export const noWalSync: WalSync = { afterSync: (done) => done(), idle: () => true };

/**
 * Runs `fn` in an immediate transaction committed with synchronous=NORMAL (no fsync of its own); the connection
 * is back at FULL afterwards, so every other writer keeps committing durably by itself. The caller tells no one
 * of what it committed before `WalSync.afterSync` calls back. NORMAL, not OFF: the commit that restarts the WAL
 * after a checkpoint must fsync the WAL's new header before its frames overwrite the old ones, or a power cut
 * with the disk's writes reordered can bring old frames back over newer pages (SQLite ticket ff5be73dee). That
 * fsync is the one left on the event loop, once per restart (src/db/checkpoint.ts makes restarts rare).
 */
export function relaxedTransactions(db: Db): <T>(fn: () => T) => T {
  const normal = db.prepare('PRAGMA synchronous = NORMAL');
  const full = db.prepare('PRAGMA synchronous = FULL');
  const transaction = inTransaction(db);
  return (fn) => {
    normal.run();
    try {
      return transaction.immediate(fn);
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
